//! Players' profiles: an optional display name and the bot mark, kept per address beside
//! the engine (a name is no part of a match or of the money, so it is not an event).
//!
//! - A name is checked by [`name::DisplayName::parse`] and is unique by its skeleton, which
//!   the store's unique index enforces across nodes. A player renames (or clears the name)
//!   at most [`RENAMES_PER_WINDOW`] times in [`RENAME_WINDOW_MS`]; the window is stored
//!   with the profile, so the bound holds on every node and across restarts.
//! - An account is a bot once an agent says so: a login with `"bot": true` (which
//!   `triad agent` always sends), or any use of the MCP server or of A2A. The mark is never
//!   taken away: a bot that logs in without it stays a bot, so no bot can pass for a
//!   person by leaving the flag out.
//!
//! The address stays the identity: a name is shown beside it, never instead of it.

pub mod name;

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
};

use triad_engine::Address;

use self::name::{DisplayName, NameError};
pub use crate::store::Profile;
use crate::{
    core::Clock,
    store::{NameWrite, Store, StoreError},
};

/// How many renames a player has in one window.
pub const RENAMES_PER_WINDOW: u32 = 5;
/// The window of renames: an hour from the first.
pub const RENAME_WINDOW_MS: u64 = 60 * 60 * 1000;
/// The most addresses this node remembers as already marked bots (then it forgets them
/// all and marks again, which is idempotent).
const KNOWN_BOTS_MAX: usize = 65_536;

/// Why a rename was refused.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The name is not one a player may take.
    #[error(transparent)]
    Name(#[from] NameError),
    /// Another player holds this name or one that looks like it.
    #[error("another player's name looks like {0:?}")]
    Taken(String),
    /// Too many renames in this window.
    #[error("too many renames; try again in {retry_after_s} s")]
    TooFrequent {
        /// Seconds until the window ends.
        retry_after_s: u64,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The profiles service: names, bot marks, and the bound on renames.
pub struct Profiles {
    store: Store,
    clock: Arc<Clock>,
    /// Addresses this node has marked bots already, so an agent's every MCP or A2A
    /// request does not write.
    known_bots: Mutex<HashSet<Address>>,
}

impl std::fmt::Debug for Profiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiles").finish_non_exhaustive()
    }
}

impl Profiles {
    /// The profiles of `store`, with the server's clock (the bound on renames reads it).
    #[must_use]
    pub fn new(store: Store, clock: Arc<Clock>) -> Profiles {
        Profiles {
            store,
            clock,
            known_bots: Mutex::new(HashSet::new()),
        }
    }

    /// A player's profile.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn of(&self, address: Address) -> Result<Profile, StoreError> {
        self.store.profile(address).await
    }

    /// The profiles of these players that have one.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn of_each(
        &self,
        addresses: &[Address],
    ) -> Result<HashMap<Address, Profile>, StoreError> {
        self.store.profiles(addresses).await
    }

    /// Sets (`Some`) or clears (`None`) a player's display name; the profile after it.
    /// Asking for the name one already has (the same text) changes nothing and is not
    /// counted; any other change counts against the bound, refused ones do not.
    ///
    /// # Errors
    /// A name that fails its checks, another player's look-alike, too many renames; a
    /// database failure.
    pub async fn rename(
        &self,
        address: Address,
        requested: Option<&str>,
    ) -> Result<Profile, ProfileError> {
        let name = requested.map(DisplayName::parse).transpose()?;
        let mut profile = self.store.profile(address).await?;
        if profile.name.as_deref() == name.as_ref().map(DisplayName::as_str) {
            return Ok(profile);
        }
        let now = self.clock.now_ms();
        let window_end = profile.renamed_ms.saturating_add(RENAME_WINDOW_MS);
        let (renamed_ms, renames) = if now >= window_end {
            (now, 1)
        } else if profile.renames >= RENAMES_PER_WINDOW {
            return Err(ProfileError::TooFrequent {
                retry_after_s: (window_end - now).div_ceil(1000),
            });
        } else {
            (profile.renamed_ms, profile.renames + 1)
        };
        let written = self
            .store
            .write_name(
                address,
                name.as_ref().map(|n| (n.as_str(), n.skeleton())),
                renamed_ms,
                renames,
            )
            .await?;
        if written == NameWrite::Taken {
            return Err(ProfileError::Taken(
                name.map(|n| n.as_str().to_owned()).unwrap_or_default(),
            ));
        }
        profile.name = name.map(|n| n.as_str().to_owned());
        profile.renamed_ms = renamed_ms;
        profile.renames = renames;
        Ok(profile)
    }

    /// Marks a player a bot, for good. Cheap to repeat: this node remembers whom it marked.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn mark_bot(&self, address: Address) -> Result<(), StoreError> {
        if self.known_bots().contains(&address) {
            return Ok(());
        }
        self.store.mark_bot(address).await?;
        let mut known = self.known_bots();
        if known.len() >= KNOWN_BOTS_MAX {
            known.clear();
        }
        known.insert(address);
        Ok(())
    }

    fn known_bots(&self) -> std::sync::MutexGuard<'_, HashSet<Address>> {
        self.known_bots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
