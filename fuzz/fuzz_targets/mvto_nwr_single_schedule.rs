#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    txlab_fuzz::schedule::<txlab_fuzz::MvtoNwrSingleTarget>(data)
});
