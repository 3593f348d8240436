//! Measures the contracts' release wasm as Stylus does and checks what activation requires.
//!
//! ```text
//! cargo run -p size-check -- target/wasm32-unknown-unknown/release/cryptosos.wasm ...
//! ```
//!
//! For each file:
//!
//! 1. It validates the module with the WebAssembly features Arbitrum Nitro accepts
//!    (`arbitrator/prover/src/binary.rs`: mutable globals, saturating float-to-int, sign
//!    extension, multi-value, bulk memory, floats; no reference types, SIMD, threads, tail
//!    calls, exceptions or memory64). rustc's overlong `call_indirect` encoding is allowed,
//!    because `cargo stylus` re-encodes the module (wasm → wat → wasm) before deploying.
//! 2. It checks the module's shape: one memory exported as `memory`, `user_entrypoint`
//!    exported as `(i32) -> i32`, every import a function from `vm_hooks`, and Nitro's limits
//!    on functions, locals, data segments and table entries.
//! 3. It drops the custom sections (names, producers, target features; `cargo stylus`
//!    strips them too), compresses the rest with brotli at quality 11 and a 2^22-byte window
//!    (what `cargo stylus` uses), and adds the 4-byte `EF F0 00 00` prefix that marks
//!    compressed Stylus code. That is the code size the chain limits to 24 KiB (EIP-170's
//!    24,576 bytes); `cargo stylus check` warns above 24,000 bytes, so this check fails
//!    above that. The uncompressed module must stay under 128 KiB.
//!
//! The `brotli` crate is a Rust port of Google's encoder that Nitro uses; their outputs at
//! the same settings may differ by a few bytes, and `cargo stylus` adds a 32-byte project
//! hash section before compressing. Both are far inside the margins printed.

use std::{env, fs, io::Write as _, path::Path, process::ExitCode};

use wasmparser::{ExternalKind, Parser, Payload, TypeRef, ValType, Validator, WasmFeatures};

/// What the chain accepts: EIP-170's code size limit, in bytes.
const CHAIN_LIMIT: usize = 24 * 1024;
/// `cargo stylus check`'s limit (24 kB), which this check enforces.
const LIMIT: usize = 24_000;
/// The largest uncompressed module Stylus accepts.
const WASM_LIMIT: usize = 128 * 1024;
/// The prefix of compressed Stylus code with no dictionary.
const PREFIX: [u8; 4] = [0xEF, 0xF0, 0x00, 0x00];

/// The features Nitro validates user programs with, plus the overlong `call_indirect`
/// encoding that `cargo stylus` normalizes away.
fn stylus_features() -> WasmFeatures {
    WasmFeatures::MUTABLE_GLOBAL
        | WasmFeatures::SATURATING_FLOAT_TO_INT
        | WasmFeatures::SIGN_EXTENSION
        | WasmFeatures::MULTI_VALUE
        | WasmFeatures::BULK_MEMORY
        | WasmFeatures::FLOATS
        | WasmFeatures::CALL_INDIRECT_OVERLONG
}

/// The measurements of one module.
#[derive(Debug)]
struct Measure {
    wasm: usize,
    stripped: usize,
    compressed: usize,
}

/// Validates `wasm` and checks the shape Stylus requires.
fn check(wasm: &[u8]) -> Result<(), String> {
    Validator::new_with_features(stylus_features())
        .validate_all(wasm)
        .map_err(|e| format!("not valid for Stylus: {e}"))?;
    let mut types = Vec::new();
    let mut funcs = Vec::new();
    let mut entrypoint = None;
    let mut memory_exported = false;
    let (mut memories, mut datas, mut table_entries, mut codes) = (0u32, 0u32, 0u64, 0u32);
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(|e| e.to_string())? {
            Payload::TypeSection(reader) => {
                for ty in reader.into_iter_err_on_gc_types() {
                    types.push(ty.map_err(|e| e.to_string())?);
                }
            }
            Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    let import = import.map_err(|e| e.to_string())?;
                    if import.module != "vm_hooks" {
                        return Err(format!(
                            "imports {}::{}; Stylus provides only vm_hooks",
                            import.module, import.name
                        ));
                    }
                    let TypeRef::Func(index) = import.ty else {
                        return Err(format!("imports {} which is not a function", import.name));
                    };
                    if import.name.starts_with("stylus") {
                        return Err(format!("imports the reserved name {}", import.name));
                    }
                    funcs.push(index);
                }
            }
            Payload::FunctionSection(reader) => {
                for ty in reader {
                    funcs.push(ty.map_err(|e| e.to_string())?);
                }
            }
            Payload::MemorySection(reader) => memories += reader.count(),
            Payload::TableSection(reader) => {
                for table in reader {
                    table_entries += table.map_err(|e| e.to_string())?.ty.initial;
                }
            }
            Payload::DataSection(reader) => datas += reader.count(),
            Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.map_err(|e| e.to_string())?;
                    match (export.name, export.kind) {
                        ("user_entrypoint", ExternalKind::Func) => entrypoint = Some(export.index),
                        ("memory", ExternalKind::Memory) => memory_exported = true,
                        (name, _) if name.starts_with("stylus") => {
                            return Err(format!("exports the reserved name {name}"));
                        }
                        _ => {}
                    }
                }
            }
            Payload::CodeSectionEntry(body) => {
                codes += 1;
                let mut locals = 0u32;
                for local in body.get_locals_reader().map_err(|e| e.to_string())? {
                    locals += local.map_err(|e| e.to_string())?.0;
                }
                if locals > 348 {
                    return Err(format!("a function has {locals} locals; Nitro allows 348"));
                }
            }
            _ => {}
        }
    }
    if memories != 1 || !memory_exported {
        return Err("Stylus needs exactly one memory, exported as \"memory\"".into());
    }
    if codes > 4096 || datas > 128 || table_entries > 4096 {
        return Err(format!(
            "over Nitro's limits: {codes} functions (4096), {datas} data segments (128), \
             {table_entries} table entries (4096)"
        ));
    }
    let index = entrypoint.ok_or("does not export user_entrypoint")?;
    let ty = funcs
        .get(index as usize)
        .and_then(|&t| types.get(t as usize))
        .ok_or("user_entrypoint has no type")?;
    let sig = ty;
    if sig.params() != [ValType::I32] || sig.results() != [ValType::I32] {
        return Err(format!(
            "user_entrypoint must be (i32) -> i32, not {:?} -> {:?}",
            sig.params(),
            sig.results()
        ));
    }
    Ok(())
}

/// The module without its custom sections.
fn strip(wasm: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = wasm[..8].to_vec();
    for payload in Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(|e| e.to_string())?;
        if let Payload::CustomSection(_) = payload {
            continue;
        }
        if let Some((id, range)) = payload.as_section() {
            // A section is its id, its size as unsigned LEB128, then its contents.
            out.push(id);
            let (start, end) = (usize::try_from(range.start), usize::try_from(range.end));
            let range = start.map_err(|e| e.to_string())?..end.map_err(|e| e.to_string())?;
            let mut size = u32::try_from(range.len()).map_err(|e| e.to_string())?;
            loop {
                let byte = (size & 0x7f) as u8;
                size >>= 7;
                if size == 0 {
                    out.push(byte);
                    break;
                }
                out.push(byte | 0x80);
            }
            out.extend_from_slice(&wasm[range]);
        }
    }
    Ok(out)
}

/// Brotli at quality 11 and a 2^22-byte window, behind the Stylus prefix.
fn compress(wasm: &[u8]) -> Result<Vec<u8>, String> {
    let mut code = PREFIX.to_vec();
    {
        let mut writer = brotli::CompressorWriter::new(&mut code, 4096, 11, 22);
        writer.write_all(wasm).map_err(|e| e.to_string())?;
    }
    Ok(code)
}

fn measure(path: &Path) -> Result<Measure, String> {
    let wasm = fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    check(&wasm)?;
    let stripped = strip(&wasm)?;
    // The stripped module must still be the same module.
    check(&stripped).map_err(|e| format!("after stripping: {e}"))?;
    let code = compress(&stripped)?;
    Ok(Measure {
        wasm: wasm.len(),
        stripped: stripped.len(),
        compressed: code.len(),
    })
}

fn main() -> ExitCode {
    let paths: Vec<String> = env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: size-check <contract.wasm>...");
        return ExitCode::FAILURE;
    }
    let mut ok = true;
    println!(
        "{:<16} {:>10} {:>10} {:>12} {:>14}",
        "contract", "wasm", "stripped", "compressed", "limit margin"
    );
    for path in &paths {
        let path = Path::new(path);
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into(),
        );
        match measure(path) {
            Ok(m) => {
                let fits = m.compressed <= LIMIT && m.stripped <= WASM_LIMIT;
                ok &= fits;
                println!(
                    "{name:<16} {:>10} {:>10} {:>12} {:>14}{}",
                    m.wasm,
                    m.stripped,
                    m.compressed,
                    LIMIT as i64 - m.compressed as i64,
                    if fits { "" } else { "  TOO LARGE" }
                );
            }
            Err(e) => {
                ok = false;
                println!("{name:<16} error: {e}");
            }
        }
    }
    println!(
        "(bytes; compressed = 4-byte prefix + brotli q11 of the stripped module; the chain \
         allows {CHAIN_LIMIT}, `cargo stylus check` {LIMIT}; uncompressed at most {WASM_LIMIT})"
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (module (memory (export "memory") 1)
    ///   (func (export "user_entrypoint") (param i32) (result i32) local.get 0))
    /// with a custom section "name-ish" appended.
    const MINIMAL: &[u8] = &[
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
        0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, // type: (i32) -> i32
        0x03, 0x02, 0x01, 0x00, // function 0 has type 0
        0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1
        0x07, 0x1c, 0x02, // exports: 2
        0x06, b'm', b'e', b'm', b'o', b'r', b'y', 0x02, 0x00, // "memory" memory 0
        0x0f, b'u', b's', b'e', b'r', b'_', b'e', b'n', b't', b'r', b'y', b'p', b'o', b'i', b'n',
        b't', 0x00, 0x00, // "user_entrypoint" func 0
        0x0a, 0x06, 0x01, 0x04, 0x00, 0x20, 0x00, 0x0b, // code: local.get 0
        0x00, 0x05, 0x03, b'a', b'b', b'c', 0xff, // custom section "abc" with one byte
    ];

    #[test]
    fn a_minimal_stylus_module_passes_and_loses_its_custom_section() {
        check(MINIMAL).unwrap();
        let stripped = strip(MINIMAL).unwrap();
        assert_eq!(stripped, MINIMAL[..MINIMAL.len() - 7]);
        check(&stripped).unwrap();
    }

    #[test]
    fn a_module_without_the_entrypoint_fails() {
        let mut wasm = MINIMAL[..MINIMAL.len() - 7].to_vec();
        let at = wasm.windows(4).position(|w| w == b"user").unwrap();
        wasm[at] = b'x';
        assert!(check(&wasm).unwrap_err().contains("user_entrypoint"));
    }

    #[test]
    fn compression_round_trips_behind_the_prefix() {
        let code = compress(MINIMAL).unwrap();
        assert_eq!(code[..4], PREFIX);
        let mut plain = Vec::new();
        brotli::BrotliDecompress(&mut &code[4..], &mut plain).unwrap();
        assert_eq!(plain, MINIMAL);
    }
}
