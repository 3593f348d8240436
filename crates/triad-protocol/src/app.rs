//! The apps (tic-tac-toe and SOS), their actions, roles and manifests.

use core::fmt;

use serde::Serialize;
use triad_rules::{GameKind, Mark, Player};

use crate::{ProtocolError, error::quote};

/// The A2A protocol's version, which Triad keeps on the wire.
pub const PROTOCOL_VERSION: &str = "0.3.0";

/// An app: a game two agents play by exchanging actions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum App {
    /// The A2A protocol's `tic-tac-toe`: roles `X` (moves first) and `O`, marks `X` and `O`.
    TicTacToe,
    /// `sos`: roles `first` and `second`, each placing `S` or `O`.
    Sos,
}

impl App {
    /// Both apps.
    pub const ALL: [App; 2] = [App::TicTacToe, App::Sos];

    /// The `appId` on the wire.
    #[must_use]
    pub const fn id(self) -> &'static str {
        match self {
            App::TicTacToe => "tic-tac-toe",
            App::Sos => "sos",
        }
    }

    /// The app of an `appId`.
    ///
    /// # Errors
    /// [`ProtocolError::UnknownApp`] for anything but `tic-tac-toe` and `sos`.
    pub fn from_id(id: &str) -> Result<App, ProtocolError> {
        App::ALL
            .into_iter()
            .find(|a| a.id() == id)
            .ok_or_else(|| ProtocolError::UnknownApp { app_id: quote(id) })
    }

    /// The game it plays.
    #[must_use]
    pub const fn game(self) -> GameKind {
        match self {
            App::TicTacToe => GameKind::TicTacToe,
            App::Sos => GameKind::Sos,
        }
    }

    /// The app that plays a game.
    #[must_use]
    pub const fn of_game(game: GameKind) -> App {
        match game {
            GameKind::TicTacToe => App::TicTacToe,
            GameKind::Sos => App::Sos,
        }
    }

    /// The name of a player's role on the wire: `X`/`O` in tic-tac-toe, `first`/`second` in
    /// SOS.
    #[must_use]
    pub const fn role_name(self, player: Player) -> &'static str {
        match (self, player) {
            (App::TicTacToe, Player::First) => "X",
            (App::TicTacToe, Player::Second) => "O",
            (App::Sos, Player::First) => "first",
            (App::Sos, Player::Second) => "second",
        }
    }

    /// The player a role name stands for.
    #[must_use]
    pub fn role(self, name: &str) -> Option<Player> {
        Player::BOTH
            .into_iter()
            .find(|&p| self.role_name(p) == name)
    }

    /// Whether a mark is one of the game's.
    #[must_use]
    pub const fn has_mark(self, mark: Mark) -> bool {
        self.game().has_mark(mark)
    }

    /// The app's manifest (the A2A protocol's front matter).
    #[must_use]
    pub fn manifest(self) -> Manifest {
        let (name, description) = match self {
            App::TicTacToe => ("Tic-Tac-Toe", "Classic two-player tic-tac-toe over A2A"),
            App::Sos => (
                "SOS",
                "Two-player SOS over A2A: each turn place S or O; whoever first spells S-O-S in a line wins",
            ),
        };
        Manifest {
            app_id: self.id(),
            name,
            description,
            version: PROTOCOL_VERSION,
            kind: "p2p",
            category: "game",
            min_participants: 2,
            max_participants: 2,
            actions: Action::ALL
                .iter()
                .map(|a| ActionInfo {
                    id: a.id(),
                    description: a.description(),
                })
                .collect(),
        }
    }
}

impl fmt::Display for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// One of the four actions of an app.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Propose a new game, claiming a role.
    Propose,
    /// Accept a proposal, taking the other role.
    Accept,
    /// Place a mark.
    Move,
    /// Declare how the game ended: win, draw, or abort.
    Result,
}

impl Action {
    /// The four actions, in the order a game uses them.
    pub const ALL: [Action; 4] = [
        Action::Propose,
        Action::Accept,
        Action::Move,
        Action::Result,
    ];

    /// The action's id on the wire.
    #[must_use]
    pub const fn id(self) -> &'static str {
        match self {
            Action::Propose => "propose",
            Action::Accept => "accept",
            Action::Move => "move",
            Action::Result => "result",
        }
    }

    /// The action of an id.
    ///
    /// # Errors
    /// [`ProtocolError::UnknownAction`].
    pub fn from_id(id: &str) -> Result<Action, ProtocolError> {
        Action::ALL
            .into_iter()
            .find(|a| a.id() == id)
            .ok_or_else(|| ProtocolError::UnknownAction { action: quote(id) })
    }

    /// The A2A protocol's description of the action.
    #[must_use]
    pub const fn description(self) -> &'static str {
        match self {
            Action::Propose => "Propose a new game to another agent",
            Action::Accept => "Accept a game proposal",
            Action::Move => "Place your mark on the board",
            Action::Result => "Declare the game outcome (win, draw, or abort with optional reason)",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// An action as the manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ActionInfo {
    /// `propose`, `accept`, `move` or `result`.
    pub id: &'static str,
    /// What it does.
    pub description: &'static str,
}

/// An app's manifest: the A2A protocol's front matter, as JSON (camelCase, as in the protocol) or
/// YAML.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// `tic-tac-toe` or `sos`.
    pub app_id: &'static str,
    /// The display name.
    pub name: &'static str,
    /// One line about the app.
    pub description: &'static str,
    /// The protocol version, `0.3.0`.
    pub version: &'static str,
    /// `p2p`: two agents talk to each other (through Triad's relay).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `game`.
    pub category: &'static str,
    /// 2.
    pub min_participants: u8,
    /// 2.
    pub max_participants: u8,
    /// The four actions.
    pub actions: Vec<ActionInfo>,
}

impl Manifest {
    /// The manifest as the A2A protocol's YAML front matter, between `---` lines.
    #[must_use]
    pub fn front_matter(&self) -> String {
        let mut out = String::from("---\n");
        out.push_str(&format!("appId: {}\n", self.app_id));
        out.push_str(&format!("name: {}\n", self.name));
        out.push_str(&format!("description: {}\n", self.description));
        out.push_str(&format!("version: \"{}\"\n", self.version));
        out.push_str(&format!("type: {}\n", self.kind));
        out.push_str(&format!("category: {}\n", self.category));
        out.push_str(&format!("minParticipants: {}\n", self.min_participants));
        out.push_str(&format!("maxParticipants: {}\n", self.max_participants));
        out.push_str("actions:\n");
        for action in &self.actions {
            out.push_str(&format!("  - id: {}\n", action.id));
            out.push_str(&format!("    description: {}\n", action.description));
        }
        out.push_str("---\n");
        out
    }
}
