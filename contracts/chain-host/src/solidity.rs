//! A reader for Solidity interface text (the checked-in `I<Name>.sol` files and the
//! interface the Stylus SDK exports from a contract), enough to compare two interfaces
//! function by function and to compute selectors and event topics from the text itself.
//!
//! It understands `function`, `event`, `error` and `struct` declarations of elementary types
//! (what Triad's contracts use) and refuses anything else rather than guess.
//!
//! ```
//! use chain_host::solidity::Interface;
//! let i = Interface::parse("interface I { function placeS(uint8 square) external; }").unwrap();
//! assert_eq!(i.functions[0].signature(), "placeS(uint8)");
//! assert_eq!(i.functions[0].selector(), [0xca, 0x66, 0xac, 0x84]);
//! ```

use std::fmt;

use alloy_primitives::{keccak256, B256};

/// How a function treats state and ether.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mutability {
    /// Changes state; refuses ether.
    NonPayable,
    /// Changes state; accepts ether.
    Payable,
    /// Reads state.
    View,
    /// Reads nothing.
    Pure,
}

/// A function declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// The name.
    pub name: String,
    /// The canonical parameter types.
    pub inputs: Vec<String>,
    /// The canonical return types (struct names as written).
    pub outputs: Vec<String>,
    /// Payable, view, pure or neither.
    pub mutability: Mutability,
}

impl Function {
    /// `name(type,type)`.
    #[must_use]
    pub fn signature(&self) -> String {
        format!("{}({})", self.name, self.inputs.join(","))
    }

    /// The first four bytes of the signature's keccak-256.
    #[must_use]
    pub fn selector(&self) -> [u8; 4] {
        selector(&self.signature())
    }
}

/// An event declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The name.
    pub name: String,
    /// The canonical parameter types.
    pub inputs: Vec<String>,
    /// Which parameters are indexed.
    pub indexed: Vec<bool>,
}

impl Event {
    /// `Name(type,type)`.
    #[must_use]
    pub fn signature(&self) -> String {
        format!("{}({})", self.name, self.inputs.join(","))
    }

    /// The signature's keccak-256: the event's first topic.
    #[must_use]
    pub fn topic(&self) -> B256 {
        keccak256(self.signature())
    }
}

/// A custom error declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The name.
    pub name: String,
    /// The canonical parameter types.
    pub inputs: Vec<String>,
    /// The NatSpec comment right above the declaration (`///` lines), joined by spaces.
    pub doc: String,
}

impl Error {
    /// `Name(type,type)`.
    #[must_use]
    pub fn signature(&self) -> String {
        format!("{}({})", self.name, self.inputs.join(","))
    }

    /// The first four bytes of the signature's keccak-256.
    #[must_use]
    pub fn selector(&self) -> [u8; 4] {
        selector(&self.signature())
    }

    /// Triad's stable error code, from a "Code N:" in the error's documentation.
    #[must_use]
    pub fn code(&self) -> Option<u16> {
        let at = self.doc.find("Code ")?;
        let digits: String = self.doc[at + 5..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        self.doc[at + 5 + digits.len()..]
            .starts_with(':')
            .then(|| digits.parse().ok())
            .flatten()
    }

    /// The name in snake_case (`GameOver` is `game_over`), as Triad's error names are.
    #[must_use]
    pub fn snake_case_name(&self) -> String {
        let mut out = String::new();
        for (i, ch) in self.name.chars().enumerate() {
            if ch.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
        }
        out
    }
}

/// The declarations of an interface, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interface {
    /// Functions.
    pub functions: Vec<Function>,
    /// Events.
    pub events: Vec<Event>,
    /// Custom errors.
    pub errors: Vec<Error>,
    /// Names of the structs declared.
    pub structs: Vec<String>,
}

/// Why interface text could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

fn fail<T>(message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError(message.into()))
}

/// The first four bytes of `signature`'s keccak-256.
#[must_use]
pub fn selector(signature: &str) -> [u8; 4] {
    let hash = keccak256(signature);
    [hash[0], hash[1], hash[2], hash[3]]
}

const ELEMENTARY: &[&str] = &["address", "bool", "string", "bytes"];

/// The canonical form of a type, as it appears in signatures.
fn canonical(ty: &str, structs: &[String]) -> Result<String, ParseError> {
    let ty = match ty {
        "uint" => "uint256",
        "int" => "int256",
        other => other,
    };
    let base = ty.trim_end_matches("[]");
    let sized = |prefix: &str, ok: fn(u32) -> bool| {
        base.strip_prefix(prefix)
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(ok)
    };
    let known = ELEMENTARY.contains(&base)
        || sized("uint", |n| n % 8 == 0 && (8..=256).contains(&n))
        || sized("int", |n| n % 8 == 0 && (8..=256).contains(&n))
        || sized("bytes", |n| (1..=32).contains(&n))
        || structs.iter().any(|s| s == base);
    if known {
        Ok(ty.to_string())
    } else {
        fail(format!("unknown type {ty:?}"))
    }
}

/// Removes comments, keeping `///` NatSpec lines as `@doc{...}` markers so errors can carry
/// their documentation.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("///") {
            let end = after.find('\n').unwrap_or(after.len());
            out.push_str(" @doc{");
            out.push_str(&after[..end].replace(['{', '}'], " "));
            out.push_str("} ");
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = &after[after.find('\n').unwrap_or(after.len())..];
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |end| &after[end + 2..]);
            out.push(' ');
        } else {
            let ch = rest.chars().next().expect("rest is not empty");
            out.push(ch);
            rest = &rest[ch.len_utf8()..];
        }
    }
    out
}

/// Splits `a, b, (c, d)` at top-level commas.
fn split_params(params: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, ch) in params.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(params[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = params[start..].trim();
    if !last.is_empty() || !parts.is_empty() {
        parts.push(last);
    }
    parts
}

/// One parameter: its canonical type and whether it is `indexed`.
fn param(text: &str, structs: &[String]) -> Result<(String, bool), ParseError> {
    let mut words = text.split_whitespace();
    let Some(ty) = words.next() else {
        return fail("an empty parameter");
    };
    let mut indexed = false;
    for word in words {
        match word {
            "indexed" => indexed = true,
            "memory" | "calldata" | "storage" | "payable" => {}
            name if name.chars().all(|c| c.is_alphanumeric() || c == '_') => {}
            other => return fail(format!("unexpected {other:?} in parameter {text:?}")),
        }
    }
    Ok((canonical(ty, structs)?, indexed))
}

/// `name(params) rest` → (name, params, rest).
fn head(decl: &str) -> Result<(&str, &str, &str), ParseError> {
    let Some(open) = decl.find('(') else {
        return fail(format!("no parameter list in {decl:?}"));
    };
    let mut depth = 0;
    for (i, ch) in decl[open..].char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    let close = open + i;
                    return Ok((
                        decl[..open].trim(),
                        &decl[open + 1..close],
                        &decl[close + 1..],
                    ));
                }
            }
            _ => {}
        }
    }
    fail(format!("unbalanced parentheses in {decl:?}"))
}

fn params(list: &str, structs: &[String]) -> Result<Vec<(String, bool)>, ParseError> {
    split_params(list)
        .into_iter()
        .map(|p| param(p, structs))
        .collect()
}

fn function(decl: &str, structs: &[String]) -> Result<Function, ParseError> {
    let (name, inputs, rest) = head(decl)?;
    let (modifiers, outputs) = match rest.find("returns") {
        Some(at) => {
            let (_, outs, after) = head(&rest[at..])?;
            if !after.trim().is_empty() {
                return fail(format!("unexpected {after:?} after returns in {decl:?}"));
            }
            (&rest[..at], params(outs, structs)?)
        }
        None => (rest, Vec::new()),
    };
    let mut mutability = Mutability::NonPayable;
    for word in modifiers.split_whitespace() {
        mutability = match word {
            "external" | "public" => mutability,
            "payable" => Mutability::Payable,
            "view" => Mutability::View,
            "pure" => Mutability::Pure,
            other => return fail(format!("unknown modifier {other:?} in {decl:?}")),
        };
    }
    Ok(Function {
        name: name.to_string(),
        inputs: params(inputs, structs)?.into_iter().map(|p| p.0).collect(),
        outputs: outputs.into_iter().map(|p| p.0).collect(),
        mutability,
    })
}

impl Interface {
    /// Reads the declarations of every interface (or contract) in `text`.
    ///
    /// # Errors
    /// When a declaration uses something this reader does not understand.
    pub fn parse(text: &str) -> Result<Interface, ParseError> {
        let text = strip_comments(text);
        let mut interface = Interface::default();
        // Struct names first, so parameters may use them in any order.
        let mut rest = text.as_str();
        while let Some(at) = find_keyword(rest, "struct") {
            let after = &rest[at + "struct".len()..];
            let name = after.split(['{', ' ', '\n']).find(|w| !w.trim().is_empty());
            let Some(name) = name else {
                return fail("a struct without a name");
            };
            interface.structs.push(name.trim().to_string());
            rest = after;
        }
        let mut doc = String::new();
        let mut rest = text.as_str();
        loop {
            let next = ["function", "event", "error", "@doc{"]
                .iter()
                .filter_map(|k| find_keyword(rest, k).map(|at| (at, *k)))
                .min();
            let Some((at, keyword)) = next else { break };
            let after = &rest[at + keyword.len()..];
            if keyword == "@doc{" {
                let end = after.find('}').unwrap_or(after.len());
                if !rest[..at].trim().is_empty() && !rest[..at].trim().ends_with('}') {
                    doc.clear();
                }
                doc.push_str(after[..end].trim());
                doc.push(' ');
                rest = &after[end..];
                continue;
            }
            let Some(end) = after.find(';') else {
                return fail(format!("{keyword} without a closing ';'"));
            };
            let decl = after[..end].trim();
            match keyword {
                "function" => interface
                    .functions
                    .push(function(decl, &interface.structs)?),
                "event" => {
                    let (name, list, rest) = head(decl)?;
                    if !rest.trim().is_empty() {
                        return fail(format!("unexpected {rest:?} in event {name}"));
                    }
                    let (inputs, indexed) = params(list, &interface.structs)?.into_iter().unzip();
                    interface.events.push(Event {
                        name: name.to_string(),
                        inputs,
                        indexed,
                    });
                }
                _ => {
                    let (name, list, _) = head(decl)?;
                    interface.errors.push(Error {
                        name: name.to_string(),
                        inputs: params(list, &interface.structs)?
                            .into_iter()
                            .map(|p| p.0)
                            .collect(),
                        doc: doc.trim().to_string(),
                    });
                }
            }
            doc.clear();
            rest = &after[end + 1..];
        }
        Ok(interface)
    }

    /// The function called `name`.
    #[must_use]
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The error called `name`.
    #[must_use]
    pub fn error(&self, name: &str) -> Option<&Error> {
        self.errors.iter().find(|e| e.name == name)
    }
}

/// Where `keyword` occurs as a whole word.
fn find_keyword(text: &str, keyword: &str) -> Option<usize> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut from = 0;
    while let Some(found) = text[from..].find(keyword) {
        let at = from + found;
        let before = text[..at].chars().next_back();
        let after = text[at + keyword.len()..].chars().next();
        let marker = keyword.starts_with('@');
        if marker || (!word(before) && !word(after)) {
            return Some(at);
        }
        from = at + keyword.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "
        // SPDX-License-Identifier: MIT
        pragma solidity ^0.8.0;
        /* a block
           comment with function fake(); */
        interface IThing {
            struct Board { uint64 id; string cells; }
            /// Emitted when it starts.
            /// Second line.
            event Started(address indexed who, uint amount);
            /// @notice The game is over. Code 0.
            error GameOver();
            /// Code 106: wait.
            error WaitNotOver(uint64 secondsLeft);
            function play() external payable;
            function placeS(uint8 square) external;
            function stats(address player) external view returns (uint32 wins, uint32 games);
            function board(uint64 id) external view returns (Board memory);
        }";

    #[test]
    fn reads_every_kind_of_declaration() {
        let i = Interface::parse(TEXT).unwrap();
        let sigs: Vec<_> = i.functions.iter().map(Function::signature).collect();
        assert_eq!(
            sigs,
            ["play()", "placeS(uint8)", "stats(address)", "board(uint64)"]
        );
        assert_eq!(i.functions[0].mutability, Mutability::Payable);
        assert_eq!(i.functions[1].mutability, Mutability::NonPayable);
        assert_eq!(i.functions[2].mutability, Mutability::View);
        assert_eq!(i.functions[2].outputs, ["uint32", "uint32"]);
        assert_eq!(i.functions[3].outputs, ["Board"]);
        assert_eq!(i.events[0].signature(), "Started(address,uint256)");
        assert_eq!(i.events[0].indexed, [true, false]);
        assert_eq!(i.errors[0].signature(), "GameOver()");
        assert_eq!(i.errors[0].doc, "@notice The game is over. Code 0.");
        assert_eq!(i.errors[0].code(), None, "a code is written \"Code N:\"");
        assert_eq!(i.errors[0].snake_case_name(), "game_over");
        assert_eq!(i.errors[1].signature(), "WaitNotOver(uint64)");
        assert_eq!(i.errors[1].code(), Some(106));
        assert_eq!(i.structs, ["Board"]);
    }

    #[test]
    fn selectors_and_topics_are_keccak_of_the_signature() {
        // Well-known values: ERC-20's transfer and Transfer.
        let i = Interface::parse(
            "interface E { function transfer(address to, uint256 v) external returns (bool);
             event Transfer(address indexed from, address indexed to, uint256 value); }",
        )
        .unwrap();
        assert_eq!(i.functions[0].selector(), [0xa9, 0x05, 0x9c, 0xbb]);
        assert_eq!(
            i.events[0].topic().to_string(),
            "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
        );
    }

    #[test]
    fn refuses_what_it_does_not_understand() {
        assert!(Interface::parse("interface I { function f(Unknown x) external; }").is_err());
        assert!(Interface::parse("interface I { function f(uint7 x) external; }").is_err());
        assert!(Interface::parse("interface I { function f() external virtual; }").is_err());
        assert!(Interface::parse("interface I { function f() external").is_err());
    }
}
