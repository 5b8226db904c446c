//! HTTP status codes counted exactly, in constant memory, and their reason phrases.

/// Replies by status code, 100..=599; anything else counts as 0 ("no valid status").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusCounts {
    counts: Box<[u64; 600]>,
}

impl Default for StatusCounts {
    fn default() -> Self {
        StatusCounts {
            counts: Box::new([0; 600]),
        }
    }
}

impl StatusCounts {
    /// Counts one reply with status `code`.
    #[inline]
    pub fn add(&mut self, code: u16) {
        let i = if (100..600).contains(&code) {
            code as usize
        } else {
            0
        };
        self.counts[i] += 1;
    }

    /// Every code seen, with its count, in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(code, &n)| (code as u16, n))
    }

    /// Replies in the class `class`xx (1 to 5).
    pub fn class(&self, class: u16) -> u64 {
        let from = (class * 100) as usize;
        self.counts[from..from + 100].iter().sum()
    }

    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.counts.iter().all(|&n| n == 0)
    }
}

impl std::ops::AddAssign<&StatusCounts> for StatusCounts {
    fn add_assign(&mut self, o: &StatusCounts) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a += b;
        }
    }
}

/// The reason phrase of a status code, from the `http` crate's table (the one table wirebench
/// uses, client and servers alike), or "" for codes it does not name.
pub fn reason(code: u16) -> &'static str {
    http::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_code_and_class() {
        let mut a = StatusCounts::default();
        a.add(200);
        a.add(200);
        a.add(503);
        let mut b = StatusCounts::default();
        b.add(404);
        b.add(42);
        a += &b;
        assert_eq!(
            a.iter().collect::<Vec<_>>(),
            vec![(0, 1), (200, 2), (404, 1), (503, 1)]
        );
        assert_eq!((a.class(2), a.class(4), a.class(5)), (2, 1, 1));
    }

    #[test]
    fn reason_phrases_come_from_the_http_crate() {
        assert_eq!(reason(200), "OK");
        assert_eq!(reason(503), "Service Unavailable");
        assert_eq!(reason(42), "");
        assert_eq!(reason(599), "");
    }
}
