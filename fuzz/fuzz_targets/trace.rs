#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hydroplot_fuzz::trace(data));
