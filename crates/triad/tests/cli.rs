//! The real `triad` binary, driven through pipes as a script would drive it.

use std::{
    io::Write,
    process::{Command, Output, Stdio},
};

use triad_rules::{AnyGame, GameKind};

/// Runs `triad` with `args`, feeding it `input` on standard input.
fn triad(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_triad"))
        .args(args)
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the triad binary runs");
    let mut stdin = child.stdin.take().unwrap();
    // A game may end before it has read every line; the pipe then closes early.
    if let Err(e) = stdin.write_all(input.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("UTF-8 errors")
}

/// Every square in order, twice: each turn takes the first free square after the last one
/// tried, so a game against anyone always gets to its end.
const SWEEP: &str = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";

#[test]
fn a_scripted_game_against_perfect_ends_in_a_draw_or_a_loss() {
    for seed in ["0", "1", "2", "3", "4"] {
        let output = triad(
            &["play", "--vs", "perfect", "--as", "X", "--seed", seed],
            SWEEP,
        );
        let out = stdout(&output);
        assert!(
            output.status.success(),
            "seed {seed}: {out}{}",
            stderr(&output)
        );
        let last = out.lines().last().unwrap();
        assert!(
            last.starts_with("The perfect computer (O) wins with three in a row on squares ")
                || last == "Draw: the board is full and nobody has three in a row.",
            "seed {seed}: {last}"
        );
        assert!(!out.contains("You (X) win"), "seed {seed}: {out}");
        // The output is plain text, with the board's empty squares numbered.
        assert!(!out.contains('\u{1b}'));
        assert!(
            out.contains("   1 | 2 | 3\n  ---+---+---\n   4 | 5 | 6\n"),
            "{out}"
        );
    }
}

#[test]
fn the_sweep_loses_to_perfect_and_the_winning_squares_are_named() {
    // Playing 1, 2, 3, ... is easy to beat; with this seed O wins on the anti-diagonal.
    let output = triad(&["play", "--seed", "42"], SWEEP);
    let out = stdout(&output);
    assert!(output.status.success());
    assert!(
        out.ends_with(
            "The computer (O) plays square 7.\n\n   X | X |[O]\n  ---+---+---\n   X |[O]| 6\n  \
             ---+---+---\n  [O]| 8 | 9\n\
             The perfect computer (O) wins with three in a row on squares 3, 5, 7.\n"
        ),
        "{out}"
    );
}

#[test]
fn two_people_and_a_win_with_the_ninth_mark() {
    let output = triad(&["play", "--vs", "human"], "1\n2\n3\n4\n5\n6\n8\n7\n9\n");
    let out = stdout(&output);
    assert!(output.status.success(), "{out}");
    assert!(
        out.ends_with(
            "  [X]| O | X\n  ---+---+---\n   O |[X]| O\n  ---+---+---\n   O | X |[X]\n\
             X wins with three in a row on squares 1, 5, 9.\n"
        ),
        "{out}"
    );
    assert!(!out.contains("Draw"), "{out}");
    assert_eq!(out.matches("X to move: ").count(), 5);
    assert_eq!(out.matches("O to move: ").count(), 4);
}

#[test]
fn an_sos_game_with_a_win() {
    let output = triad(&["play", "--game", "sos", "--vs", "human"], "S1\no2\n3s\n");
    let out = stdout(&output);
    assert!(output.status.success(), "{out}");
    assert!(
        out.ends_with(
            "  [S]|[O]|[S]\n  ---+---+---\n   4 | 5 | 6\n  ---+---+---\n   7 | 8 | 9\n\
             Player 1 wins with S-O-S on squares 1, 2, 3.\n"
        ),
        "{out}"
    );
}

#[test]
fn sos_against_the_computer_ends_properly() {
    // Try S then O in every square: some letter always fits, so the game always ends.
    let script: String = (1..=9).map(|sq| format!("S{sq}\nO{sq}\n")).collect();
    for strength in ["perfect", "casual", "random"] {
        for side in ["X", "O"] {
            let args = [
                "play", "--game", "sos", "--vs", strength, "--as", side, "--seed", "7",
            ];
            let output = triad(&args, &script);
            let out = stdout(&output);
            assert!(
                output.status.success(),
                "{strength} {side}: {out}{}",
                stderr(&output)
            );
            let last = out.lines().last().unwrap();
            assert!(
                last.contains(" wins with S-O-S on squares ")
                    || last.starts_with("You (player ")
                        && last.contains(" win with S-O-S on squares ")
                    || last == "Draw: the board is full and nobody spelled SOS.",
                "{strength} {side}: {last}"
            );
            if strength == "perfect" {
                // Perfect play cannot lose.
                assert!(!last.starts_with("You"), "{strength} {side}: {last}");
            }
        }
    }
}

#[test]
fn bad_input_gets_a_message_and_a_new_prompt() {
    let input = "hello\n0\nS\n\n5\n5\nS3\n?\nq\n";
    let output = triad(&["play", "--vs", "human"], input);
    let out = stdout(&output);
    assert!(output.status.success(), "{out}");
    let expected = "\
X to move: hello
I don't understand \"hello\". Type h for help, ? for a hint, q to quit.
X to move: 0
There is no square 0; squares go from 1 to 9.
X to move: S
I don't understand \"S\". Type h for help, ? for a hint, q to quit.
X to move: 
X to move: 5
";
    assert!(out.contains(expected), "{out}");
    let expected = "\
O to move: 5
Square 5 is taken; choose an empty square.
O to move: S3
Tic-tac-toe has no S; type just the square, like 3.
O to move: ?
Hint: with best play you draw, 8 plies from now. Each move's result, counting the move:
  draw in 8: 1, 3, 7, 9
  loss in 6: 2, 4, 6, 8
O to move: q
Game abandoned.
";
    assert!(out.ends_with(expected), "{out}");
}

#[test]
fn the_same_seed_and_input_give_the_same_output() {
    let script: String = (1..=9).map(|sq| format!("S{sq}\nO{sq}\n{sq}\n")).collect();
    for game in ["tic-tac-toe", "sos"] {
        for strength in ["perfect", "casual", "random"] {
            let run = |seed: &str| {
                let args = [
                    "play", "--game", game, "--vs", strength, "--as", "O", "--seed", seed,
                ];
                let output = triad(&args, &script);
                assert!(output.status.success(), "{game} {strength}");
                output.stdout
            };
            assert_eq!(run("123"), run("123"), "{game} {strength}");
            // And the seed matters: some other seed gives another game.
            let first = run("123");
            assert!(
                (0..10).any(|seed| {
                    let other = run(&seed.to_string());
                    // Outputs differ anyway in the seed they print; compare from the first move.
                    let moves = |out: &[u8]| {
                        String::from_utf8_lossy(out)
                            .lines()
                            .skip(2)
                            .collect::<Vec<_>>()
                            .join("\n")
                    };
                    moves(&other) != moves(&first)
                }),
                "{game} {strength}"
            );
        }
    }
}

#[test]
fn quitting_exits_with_success_and_input_ending_early_does_not() {
    let output = triad(&["play", "--seed", "1"], "5\nq\n");
    assert!(output.status.success());
    assert!(stdout(&output).ends_with("Game abandoned.\n"));

    let output = triad(&["play", "--seed", "1"], "5\n");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).ends_with(": \n"),
        "the last prompt's line is ended"
    );
    assert_eq!(
        stderr(&output),
        "triad: error: the input ended before the game did\n"
    );

    let output = triad(&["play", "--vs", "human"], "");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn arguments_are_checked() {
    let output = triad(&["play", "--vs", "human", "--as", "O"], "");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("--as picks your side against the computer"));

    let output = triad(&["play", "--vs", "expert"], "");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("perfect, casual, random, human"),
        "{}",
        stderr(&output)
    );

    // --as is case-insensitive and also takes first/second.
    for side in ["o", "second"] {
        let output = triad(&["play", "--as", side, "--seed", "5"], "q\n");
        assert!(output.status.success());
        assert!(stdout(&output).starts_with("Tic-tac-toe: you are O, the perfect computer is X."));
    }
}

#[test]
fn solve_exports_moves_js() {
    let output = triad(
        &["solve", "--game", "tic-tac-toe", "--format", "moves-js"],
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let moves = triad_solver::parse_moves_js(&stdout(&output)).expect("moves.js parses");
    assert_eq!(moves.len(), 2_097);
    for (&number, &cell) in &moves {
        let game = AnyGame::from_position_number(GameKind::TicTacToe, u32::from(number)).unwrap();
        assert!(!game.is_over());
        assert_eq!(
            game.board().get(cell),
            None,
            "position {number}: cell {cell} is free"
        );
    }
}

#[test]
fn solve_exports_jsonl() {
    for (game, lines) in [("tic-tac-toe", 4_520), ("sos", 19_416 - 4_514)] {
        let output = triad(&["solve", "--game", game, "--format", "jsonl"], "");
        assert!(output.status.success(), "{}", stderr(&output));
        let out = stdout(&output);
        assert_eq!(out.lines().count(), lines, "{game}");
        for line in out.lines() {
            let json: serde_json::Value = serde_json::from_str(line).expect("valid JSON");
            assert!(
                json["board"].is_string() && json["value"].is_string(),
                "{line}"
            );
            assert!(
                json["plies"].is_u64() && json["best"]["cell"].is_u64(),
                "{line}"
            );
        }
    }
}

#[test]
fn solve_writes_the_output_file() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("triad-solve-test.jsonl");
    let _ = std::fs::remove_file(&path);
    let args = ["solve", "--game", "sos", "--format", "jsonl", "--output"];
    let output = triad(&[&args[..], &[path.to_str().unwrap()]].concat(), "");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(output.stdout.is_empty());
    let to_stdout = triad(&args[..5], "");
    assert_eq!(std::fs::read(&path).unwrap(), to_stdout.stdout);
}

#[test]
fn moves_js_for_sos_is_a_clear_error() {
    let output = triad(&["solve", "--game", "sos", "--format", "moves-js"], "");
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(
        stderr(&output).contains("use --format jsonl for sos"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_reader_that_stops_early_is_no_error() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_triad"))
        .args(["solve", "--game", "sos", "--format", "jsonl"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with(r#"{"board":"---------","#), "{first}");
    // The reader is gone; the rest of the output meets a closed pipe.
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(output.stderr.is_empty(), "{}", stderr(&output));
}

/// A key made by `triad keygen` in `dir`, then made readable by everyone (as a browser
/// saves a download); its path and address.
#[cfg(unix)]
fn key_file_others_can_read(dir: &std::path::Path) -> (std::path::PathBuf, String) {
    use std::os::unix::fs::PermissionsExt as _;

    let key_file = dir.join("triad-key.json");
    let made = triad(&["keygen", "--key-file", key_file.to_str().unwrap()], "");
    assert!(made.status.success(), "{}", stderr(&made));
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    (key_file, stdout(&made).trim().to_owned())
}

#[cfg(unix)]
#[test]
fn a_key_file_others_can_read_is_refused_with_the_command_that_fixes_it() {
    use std::os::unix::fs::PermissionsExt as _;

    let dir = tempfile::tempdir().unwrap();
    let (key_file, address) = key_file_others_can_read(dir.path());
    let path = key_file.to_str().unwrap();

    // Not at a terminal (standard input is a pipe, even one that says yes): refused, with
    // the exact command, and the file is left as it was.
    let refused = triad(&["whoami", "--key-file", path], "y\n");
    assert!(!refused.status.success());
    let message = stderr(&refused);
    assert!(message.contains(&format!("chmod 600 {path}")), "{message}");
    assert!(message.contains("mode 644"), "{message}");
    assert!(
        !message.contains("[y/N]"),
        "no question without a terminal: {message}"
    );
    assert!(stdout(&refused).is_empty());
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644, "the mode is the owner's to change");

    // Once fixed as it says, the key is read.
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let fixed = triad(&["whoami", "--key-file", path], "");
    assert!(fixed.status.success(), "{}", stderr(&fixed));
    assert_eq!(stdout(&fixed).trim(), address);
}

/// Runs `triad` with standard input and standard error on a pseudo-terminal (as a person at
/// a terminal runs it), typing `typed` there; its standard output and what the terminal
/// showed.
#[cfg(unix)]
fn triad_at_a_terminal(args: &[&str], typed: &str) -> (Output, String) {
    use std::io::Read as _;

    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};

    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pseudo-terminal");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    let mut master = std::fs::File::from(master);
    // The line is in the terminal's buffer before the question: read when it is asked.
    master.write_all(typed.as_bytes()).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_triad"))
        .args(args)
        .stdin(terminal.try_clone().unwrap())
        .stdout(Stdio::piped())
        .stderr(terminal)
        .output()
        .expect("the triad binary runs");
    // Every end of the terminal is closed now: the master reads what was shown, then fails
    // (EIO on Linux) instead of waiting.
    let mut shown = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n @ 1..) = master.read(&mut chunk) {
        shown.extend_from_slice(&chunk[..n]);
    }
    (output, String::from_utf8_lossy(&shown).into_owned())
}

#[cfg(unix)]
#[test]
fn at_a_terminal_a_key_file_others_can_read_is_made_private_once_the_user_agrees() {
    use std::os::unix::fs::PermissionsExt as _;

    let dir = tempfile::tempdir().unwrap();
    let (key_file, address) = key_file_others_can_read(dir.path());
    let path = key_file.to_str().unwrap();
    let mode = || std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;

    // The question, answered no (as Enter alone does): refused with the advice, unchanged.
    let (refused, shown) = triad_at_a_terminal(&["whoami", "--key-file", path], "\n");
    assert!(!refused.status.success(), "{shown}");
    assert!(
        shown.contains(&format!(
            "The key file {path} can be read by other users (mode 644)."
        )),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("as `chmod 600 {path}` does? [y/N]")),
        "{shown}"
    );
    assert!(shown.contains(&format!("chmod 600 {path}")), "{shown}");
    assert!(stdout(&refused).is_empty());
    assert_eq!(mode(), 0o644, "no is no");

    // Answered yes: the mode is fixed, it says so, and the key is read.
    let (fixed, shown) = triad_at_a_terminal(&["whoami", "--key-file", path], "y\n");
    assert!(fixed.status.success(), "{shown}");
    assert!(
        shown.contains(&format!("{path} is now private (mode 600).")),
        "{shown}"
    );
    assert_eq!(stdout(&fixed).trim(), address);
    assert_eq!(mode(), 0o600);

    // From then on, no question.
    let (again, shown) = triad_at_a_terminal(&["whoami", "--key-file", path], "");
    assert!(again.status.success(), "{shown}");
    assert!(!shown.contains("[y/N]"), "{shown}");
}
