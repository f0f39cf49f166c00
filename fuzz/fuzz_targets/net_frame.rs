#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| txlab_fuzz::net_frame(data));
