//! Players' profiles (`profiles`, migration 6): a display name with its skeleton under a
//! unique index, the bot mark, and the window of the per-player bound on renames. What a
//! name may be and when a rename is allowed are [`crate::profiles`]'s; this module only
//! reads and writes the rows.

use std::collections::HashMap;

use sqlx::{Row, any::AnyRow};
use triad_engine::Address;

use super::{Store, StoreError, close_after_failed_write, to_i64, to_u64};

/// A player's profile as stored; a player with no row has the default (no name, not a bot).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// The display name, as the player wrote it.
    pub name: Option<String>,
    /// Whether an agent said this account is a bot.
    pub bot: bool,
    /// When the current window of renames began (ms since the epoch).
    pub renamed_ms: u64,
    /// Renames in that window.
    pub renames: u32,
}

/// What [`Store::write_name`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameWrite {
    /// The name (or its absence) is stored.
    Written,
    /// Another player holds a name with the same skeleton: nothing changed.
    Taken,
}

const COLUMNS: &str = "address, name, bot, renamed_ms, renames";

fn profile_of(row: &AnyRow) -> Result<(Address, Profile), StoreError> {
    let address: String = row.try_get(0)?;
    let address = address
        .parse()
        .map_err(|_| StoreError::Corrupt(format!("profile address {address}")))?;
    let renames = u32::try_from(row.try_get::<i64, _>(4)?)
        .map_err(|_| StoreError::Corrupt(format!("renames of {address}")))?;
    Ok((
        address,
        Profile {
            name: row.try_get(1)?,
            bot: row.try_get::<i64, _>(2)? != 0,
            renamed_ms: to_u64(row.try_get(3)?),
            renames,
        },
    ))
}

impl Store {
    /// A player's profile (the default when they have none).
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn profile(&self, address: Address) -> Result<Profile, StoreError> {
        // Audited: a fixed column list.
        let sql = format!("SELECT {COLUMNS} FROM profiles WHERE address = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(address.to_string())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row
            .map(|r| profile_of(&r))
            .transpose()?
            .map(|(_, p)| p)
            .unwrap_or_default())
    }

    /// The profiles of these players that have one (at most 500 are asked at a time).
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn profiles(
        &self,
        addresses: &[Address],
    ) -> Result<HashMap<Address, Profile>, StoreError> {
        let mut found = HashMap::new();
        for chunk in addresses.chunks(500) {
            let placeholders: Vec<String> = (1..=chunk.len()).map(|n| format!("${n}")).collect();
            // Audited: the text is fixed but for the count of numbered placeholders; the
            // addresses are bound.
            let sql = format!(
                "SELECT {COLUMNS} FROM profiles WHERE address IN ({})",
                placeholders.join(", ")
            );
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for address in chunk {
                query = query.bind(address.to_string());
            }
            for row in query.fetch_all(&self.pool).await? {
                let (address, profile) = profile_of(&row)?;
                found.insert(address, profile);
            }
        }
        Ok(found)
    }

    /// Sets (`Some((name, skeleton))`) or clears (`None`) a player's display name, with the
    /// rename window it opens or counts in. The unique index on the skeleton decides
    /// between players: when another holds a look-alike, nothing changes and the answer is
    /// [`NameWrite::Taken`], also when two nodes race for it.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn write_name(
        &self,
        address: Address,
        name: Option<(&str, &str)>,
        renamed_ms: u64,
        renames: u32,
    ) -> Result<NameWrite, StoreError> {
        let mut conn = self.pool.acquire().await?;
        if let Some((_, key)) = name {
            let holder = sqlx::query("SELECT address FROM profiles WHERE name_key = $1")
                .bind(key)
                .fetch_optional(&mut *conn)
                .await?
                .map(|r| r.try_get::<String, _>(0))
                .transpose()?;
            if holder.is_some_and(|holder| holder != address.to_string()) {
                return Ok(NameWrite::Taken);
            }
        }
        let result = sqlx::query(
            "INSERT INTO profiles (address, name, name_key, bot, renamed_ms, renames) \
             VALUES ($1, $2, $3, 0, $4, $5) ON CONFLICT (address) DO UPDATE SET \
             name = excluded.name, name_key = excluded.name_key, \
             renamed_ms = excluded.renamed_ms, renames = excluded.renames",
        )
        .bind(address.to_string())
        .bind(name.map(|(text, _)| text))
        .bind(name.map(|(_, key)| key))
        .bind(to_i64(renamed_ms))
        .bind(i64::from(renames))
        .execute(&mut *conn)
        .await;
        match result {
            Ok(_) => Ok(NameWrite::Written),
            // Another node took the skeleton between the look and the write.
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(NameWrite::Taken),
            Err(e) => {
                close_after_failed_write(&mut conn);
                Err(e.into())
            }
        }
    }

    /// Marks a player a bot, for good (no statement sets the mark back).
    ///
    /// # Errors
    /// On a database failure.
    pub async fn mark_bot(&self, address: Address) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await?;
        let result = sqlx::query(
            "INSERT INTO profiles (address, bot) VALUES ($1, 1) \
             ON CONFLICT (address) DO UPDATE SET bot = 1",
        )
        .bind(address.to_string())
        .execute(&mut *conn)
        .await;
        if result.is_err() {
            close_after_failed_write(&mut conn);
        }
        result?;
        Ok(())
    }
}
