//! The parser on arbitrary text: a `ParseError` or a module, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = ptx_parser::parse(text);
    }
});
