//! The hash maps and sets of the analyzer and the server. Their keys are a
//! bundle's own names, paths and indices, not an attacker's: foldhash is
//! several times faster than std's SipHash, which showed in every keystroke's
//! profile.

pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;
