// Compiles the Solidity reference with the exact solc pinned in package.json and writes the
// creation bytecode of each contract to build/<Name>.bin (hex, one line).
//
//   npm ci && node build.mjs           rebuild build/*.bin
//   npm ci && node build.mjs --check   fail unless a rebuild reproduces build/*.bin byte for byte
//
// The differential test (cryptosos/tests/differential.rs) deploys build/*.bin in revm.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const solc = require('solc');
const pinned = JSON.parse(readFileSync(new URL('./package.json', import.meta.url))).dependencies.solc;
const check = process.argv.includes('--check');

if (!solc.version().startsWith(`${pinned}+`)) {
  console.error(`solc ${solc.version()} is installed, but package.json pins ${pinned}; run npm ci`);
  process.exit(1);
}

const files = { 'CryptoSOS.sol': ['CryptoSOS'], 'Refuser.sol': ['Refuser'] };
const input = {
  language: 'Solidity',
  sources: Object.fromEntries(
    Object.keys(files).map((f) => [f, { content: readFileSync(new URL(f, import.meta.url), 'utf8') }]),
  ),
  settings: {
    evmVersion: 'cancun',
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { '*': { '*': ['evm.bytecode.object'] } },
  },
};

const output = JSON.parse(solc.compile(JSON.stringify(input)));
const problems = output.errors ?? [];
for (const p of problems) console.error(p.formattedMessage);
if (problems.length > 0) {
  console.error('solc reported problems (warnings count: the reference must compile cleanly)');
  process.exit(1);
}

mkdirSync(new URL('./build/', import.meta.url), { recursive: true });
let stale = false;
for (const [file, names] of Object.entries(files)) {
  for (const name of names) {
    const hex = output.contracts[file][name].evm.bytecode.object + '\n';
    const path = new URL(`./build/${name}.bin`, import.meta.url);
    if (check) {
      let committed = '';
      try { committed = readFileSync(path, 'utf8'); } catch { /* missing counts as stale */ }
      if (committed !== hex) {
        console.error(`build/${name}.bin differs from what solc ${pinned} produces from ${file}`);
        stale = true;
      } else {
        console.log(`build/${name}.bin: reproduced byte for byte by solc ${pinned}`);
      }
    } else {
      writeFileSync(path, hex);
      console.log(`build/${name}.bin: ${(hex.length - 1) / 2} bytes`);
    }
  }
}
if (stale) {
  console.error('rebuild with: cd contracts/reference && npm ci && node build.mjs');
  process.exit(1);
}
