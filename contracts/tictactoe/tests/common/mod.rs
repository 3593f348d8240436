//! What the tic-tac-toe tests share: the contract on a `chain-host` chain, and calls encoded
//! from the checked-in interface file.
// Each test file uses a different part of this module.
#![allow(dead_code, unreachable_pub, unused_imports)]

pub use chain_host::{Chain, Receipt};
pub use stylus_sdk::alloy_primitives::{Address, U256};
pub use stylus_sdk::alloy_sol_types::{SolCall, SolError, SolEvent};
use tictactoe::TicTacToeContract;

// The calls, events and errors, generated from the interface file the contract is checked
// against (tests/interface.rs).
stylus_sdk::alloy_sol_types::sol!(
    #![sol(all_derives)]
    "ITicTacToe.sol"
);
pub use ITicTacToe::*;

pub const ALICE: Address = Address::repeat_byte(0xa1);
pub const BOB: Address = Address::repeat_byte(0xb0);
pub const CAROL: Address = Address::repeat_byte(0xca);
pub const DAVE: Address = Address::repeat_byte(0xda);
pub const CONTRACT: Address = Address::repeat_byte(0x77);

/// The contract's ABI entry point, as the chain calls it.
pub fn entry() -> chain_host::Entry {
    stylus_sdk::abi::router_entrypoint::<TicTacToeContract, TicTacToeContract>
}

/// A deployed contract; everyone has a little ether (to show that no call takes any).
pub struct Boards {
    pub chain: Chain,
}

impl Boards {
    pub fn new() -> Boards {
        let chain = Chain::new(CONTRACT, entry());
        chain.set_time(1_700_000_000);
        for who in [ALICE, BOB, CAROL, DAVE] {
            chain.set_balance(who, U256::from(1_000));
        }
        Boards { chain }
    }

    pub fn send<C: SolCall>(&self, from: Address, call: C) -> Receipt {
        self.chain.call(from, U256::ZERO, call.abi_encode())
    }

    /// `createBoard(opponent)`; the new board's id.
    pub fn create(&self, from: Address, opponent: Address) -> Receipt {
        self.send(from, createBoardCall { opponent })
    }

    pub fn accept(&self, from: Address, board_id: u64) -> Receipt {
        self.send(from, acceptBoardCall { boardId: board_id })
    }

    pub fn decline(&self, from: Address, board_id: u64) -> Receipt {
        self.send(from, declineBoardCall { boardId: board_id })
    }

    pub fn play(&self, from: Address, position: u8) -> Receipt {
        self.send(from, playGameCall { position })
    }

    pub fn resign(&self, from: Address) -> Receipt {
        self.send(from, resignCall {})
    }

    pub fn board_of(&self, player: Address) -> Board {
        let receipt = self.send(CAROL, boardOfCall { player });
        boardOfCall::abi_decode_returns(receipt.output()).unwrap()
    }

    pub fn board(&self, board_id: u64) -> Board {
        let receipt = self.send(CAROL, getBoardCall { boardId: board_id });
        getBoardCall::abi_decode_returns(receipt.output()).unwrap()
    }

    /// ALICE invites BOB and BOB accepts: board `id`, ALICE (X) to move.
    pub fn started(&self) -> u64 {
        let receipt = self.create(ALICE, BOB);
        let id = createBoardCall::abi_decode_returns(receipt.output()).unwrap();
        self.accept(BOB, id).assert_ok();
        id
    }

    /// Plays `cells` alternately, ALICE (X) first.
    pub fn moves(&self, cells: &[u8]) -> Vec<Receipt> {
        cells
            .iter()
            .enumerate()
            .map(|(i, &cell)| self.play(if i % 2 == 0 { ALICE } else { BOB }, cell))
            .collect()
    }
}

/// Asserts that `receipt` reverted with exactly `error`.
#[track_caller]
pub fn assert_error<E: SolError + std::fmt::Debug>(receipt: &Receipt, error: E) {
    assert!(
        receipt.reverted_with(&error),
        "expected {error:?} ({}), got {receipt:?}",
        E::SIGNATURE
    );
}
