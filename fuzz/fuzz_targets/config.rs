//! config: arbitrary JSON → ConfigValue → JpegConfig::parse. Must never panic; an
//! accepted configuration normalises to a value that parses to the same configuration.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr_jpeg::{ConfigValue, JpegConfig};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<ConfigValue>(data) else { return };
    let _ = value.describe();
    if let Ok(config) = JpegConfig::parse(&value) {
        let normal = config.to_value();
        let again = JpegConfig::parse(&normal).expect("the normalised form parses");
        assert_eq!(again, config);
        let json = serde_json::to_string(&normal).unwrap();
        let reparsed: ConfigValue = serde_json::from_str(&json).unwrap();
        assert_eq!(JpegConfig::parse(&reparsed).unwrap(), config);
    }
});
