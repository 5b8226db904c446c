//! CPU pressure (Linux PSI, `/proc/pressure/cpu`): how long runnable tasks waited for a CPU.
//! A diagnosis reads it over a run, so that a tail the machine made (a loaded host taking the
//! CPU from the client or the server for milliseconds) is not blamed on the target.

/// The `some` line's `total`: µs during which at least one task waited for a CPU.
pub fn cpu_waited_us() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/pressure/cpu").ok()?;
    let some = text.lines().find(|l| l.starts_with("some "))?;
    some.split_whitespace()
        .find_map(|w| w.strip_prefix("total="))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_total_only_grows() {
        let Some(a) = super::cpu_waited_us() else {
            return; // a kernel without PSI: nothing to read, nothing to assert
        };
        assert!(super::cpu_waited_us().unwrap() >= a);
    }
}
