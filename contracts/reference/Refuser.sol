// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity 0.8.30;

/// @title A player account that can refuse ether (test fixture)
/// @notice The differential test plays some games from contract accounts like this one: it
/// pays its stakes from its own balance through forward(), and while `refusing` is set its
/// receive function reverts, so every plain ether transfer to it fails. That is how
/// CryptoSOS's "a refused payout to the opponent is kept for them, and withdraw() pays it
/// later" path is compared. Anyone may drive it; it exists only in tests.
contract Refuser {
    bool public refusing = true;

    constructor() payable {}

    receive() external payable {
        require(!refusing);
    }

    function setRefusing(bool refuse) external {
        refusing = refuse;
    }

    /// Calls `target` with `data` and `value` wei of this account's ether, and returns or
    /// reverts with exactly what the call returned or reverted with.
    function forward(address target, bytes calldata data, uint256 value) external {
        (bool ok, bytes memory result) = target.call{value: value}(data);
        assembly {
            switch ok
            case 0 { revert(add(result, 32), mload(result)) }
            default { return(add(result, 32), mload(result)) }
        }
    }
}
