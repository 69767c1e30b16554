//! FNV-1a, 64 bits: the seed of a tensor's random inputs (from its name) and the checksum of
//! an output's bytes (`rime run --json`). A [`std::io::Write`], so that a tensor is hashed as
//! it is written, without a copy.

/// The running hash.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Fnv1a {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x100_0000_01b3;

    /// The hash of no bytes.
    pub const fn new() -> Fnv1a {
        Fnv1a(Fnv1a::OFFSET)
    }

    /// Adds `bytes`.
    pub fn add(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(Fnv1a::PRIME);
        }
    }

    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut h = Fnv1a::new();
        h.add(bytes);
        h.0
    }

    /// The hash so far.
    pub const fn value(self) -> u64 {
        self.0
    }
}

impl std::io::Write for Fnv1a {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.add(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // The FNV-1a 64 test vectors of the reference implementation.
        assert_eq!(Fnv1a::of(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Fnv1a::of(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Fnv1a::of(b"foobar"), 0x8594_4171_f739_67e8);
        let mut h = Fnv1a::new();
        std::io::Write::write_all(&mut h, b"foo").unwrap();
        h.add(b"bar");
        assert_eq!(h.value(), Fnv1a::of(b"foobar"));
    }
}
