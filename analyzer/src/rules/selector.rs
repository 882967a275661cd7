//! Which rules a configuration names.

use super::{Group, Rule};

/// A rule selector: `ALL`, a code (`MZ301`), a code prefix (`MZ3`), a group
/// name (`context-budget`, see `rules::Group`) or `default` (the rules that
/// run when nothing is configured).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// A code prefix; empty for `ALL`.
    Prefix(String),
    Group(Group),
    Default,
}

impl Selector {
    /// Parses a selector; `None` when it matches no rule.
    pub fn parse(text: &str) -> Option<Selector> {
        let upper = text.trim().to_ascii_uppercase();
        if upper == "ALL" {
            return Some(Selector::Prefix(String::new()));
        }
        if upper == "DEFAULT" {
            return Some(Selector::Default);
        }
        if let Some(group) = Group::lookup(text) {
            return Some(Selector::Group(group));
        }
        let matches_some = Rule::ALL.iter().any(|r| r.code().starts_with(&upper));
        (matches_some && upper.starts_with("MZ")).then_some(Selector::Prefix(upper))
    }

    pub fn matches(&self, rule: Rule) -> bool {
        match self {
            Selector::Prefix(prefix) => rule.code().starts_with(prefix.as_str()),
            Selector::Group(group) => rule.group() == *group,
            Selector::Default => rule.default_enabled(),
        }
    }

    /// Longer prefixes are more specific and win over shorter ones; a group
    /// (or `default`) is more specific than `ALL` and less than any prefix.
    pub(crate) fn specificity(&self) -> usize {
        match self {
            Selector::Prefix(prefix) if prefix.is_empty() => 0,
            Selector::Prefix(prefix) => prefix.len() + 1,
            Selector::Group(_) | Selector::Default => 1,
        }
    }
}
