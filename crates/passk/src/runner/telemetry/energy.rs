//! Sharing a GPU's energy counter among the model calls in flight on it.

use std::collections::BTreeMap;

/// One call's share of the GPU's energy so far.
#[derive(Debug, Clone, Copy)]
struct Share {
    /// Joules apportioned to it (`None`: some of its interval could not be measured).
    joules: Option<f64>,
    /// Most calls in flight at once while it ran, itself included.
    most_in_flight: u32,
}

/// Splits the GPU's energy counter among the calls in flight. At each reading (a call starting or
/// ending) what the counter gained since the previous reading is shared evenly among the calls
/// that were in flight over that interval; a call's energy is the sum of its shares. The shares of
/// all calls add up to the counter's gain over the time any call was in flight, so summing calls'
/// energies never counts an interval twice, however many calls overlapped. With one call at a
/// time a call's share is exactly the counter's delta over its interval.
///
/// An interval that cannot be measured makes the energy of every call in flight over it unknown,
/// never a smaller number: a reading that fails (NVML error, an exporter that stops answering),
/// or a counter that goes backwards (the GPU or its driver was reset, so what it gained before the
/// reset is lost).
#[derive(Debug, Default)]
pub struct Apportioner {
    last_mj: Option<u64>,
    calls: BTreeMap<u64, Share>,
    next_id: u64,
}

impl Apportioner {
    /// Shares the counter's gain since the last reading among the calls in flight.
    pub fn advance(&mut self, counter_mj: Option<u64>) {
        match (self.last_mj, counter_mj) {
            (Some(last), Some(now)) if now >= last => {
                let each = (now - last) as f64 / 1000.0 / self.calls.len().max(1) as f64;
                for share in self.calls.values_mut() {
                    share.joules = share.joules.map(|j| j + each);
                }
            }
            // A first reading: nothing to share yet.
            (None, Some(_)) => {}
            // Unreadable now, or reset since the last reading: what the calls in flight used over
            // this interval is unknown.
            _ => {
                for share in self.calls.values_mut() {
                    share.joules = None;
                }
            }
        }
        self.last_mj = counter_mj;
    }

    /// A call starts with the counter reading `counter_mj`; returns its id.
    pub fn begin(&mut self, counter_mj: Option<u64>) -> u64 {
        self.advance(counter_mj);
        let id = self.next_id;
        self.next_id += 1;
        self.calls.insert(
            id,
            Share {
                joules: counter_mj.map(|_| 0.0),
                most_in_flight: 1,
            },
        );
        let in_flight = self.calls.len() as u32;
        for share in self.calls.values_mut() {
            share.most_in_flight = share.most_in_flight.max(in_flight);
        }
        id
    }

    /// Call `id` ends with the counter reading `counter_mj`: its energy in joules (`None` when any
    /// part of its interval could not be measured) and the most calls in flight at once while it
    /// ran.
    pub fn finish(&mut self, id: u64, counter_mj: Option<u64>) -> (Option<f64>, u32) {
        self.advance(counter_mj);
        match self.calls.remove(&id) {
            Some(share) => (share.joules, share.most_in_flight),
            None => (None, 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_calls_share_the_energy_and_never_count_it_twice() {
        let mut a = Apportioner::default();
        // Call 0 alone from 1000 mJ to 3000 mJ, then call 1 joins; the 4000 mJ gained while both
        // ran is split in two; call 1 ends alone at 9000 mJ.
        let first = a.begin(Some(1_000));
        a.advance(Some(3_000));
        let second = a.begin(Some(3_000));
        let (e0, n0) = a.finish(first, Some(7_000));
        let (e1, n1) = a.finish(second, Some(9_000));
        assert_eq!((e0, n0), (Some(4.0), 2));
        assert_eq!((e1, n1), (Some(4.0), 2));
        assert_eq!(
            e0.unwrap_or(0.0) + e1.unwrap_or(0.0),
            8.0,
            "the counter's gain, once"
        );
        // One call at a time: exactly the counter's delta, alone.
        let lone = a.begin(Some(10_000));
        assert_eq!(a.finish(lone, Some(10_500)), (Some(0.5), 1));
        // A counter that cannot be read is an absence, never a zero.
        let blind = a.begin(None);
        assert_eq!(a.finish(blind, Some(11_000)).0, None);
        let late = a.begin(Some(11_000));
        assert_eq!(a.finish(late, None).0, None);
    }

    #[test]
    fn a_failed_reading_leaves_the_calls_over_it_unknown_not_smaller() {
        let mut a = Apportioner::default();
        let long = a.begin(Some(1_000));
        let short = a.begin(Some(1_000));
        // The short call ends while the counter cannot be read: its energy is unknown, and so is
        // the long call's, since part of the gain up to the next reading was the short call's.
        assert_eq!(a.finish(short, None).0, None);
        assert_eq!(a.finish(long, Some(9_000)).0, None);
        // The next call measures again from a fresh reading.
        let next = a.begin(Some(9_000));
        assert_eq!(a.finish(next, Some(9_250)).0, Some(0.25));
    }

    #[test]
    fn a_counter_that_goes_backwards_is_a_reset_never_a_negative_or_huge_energy() {
        let mut a = Apportioner::default();
        let before = a.begin(Some(5_000_000));
        // The GPU was reset mid-call: the counter restarts near 0.
        assert_eq!(a.finish(before, Some(2_000)).0, None);
        // Measuring resumes from the new origin.
        let after = a.begin(Some(2_000));
        assert_eq!(a.finish(after, Some(3_000)).0, Some(1.0));
        // A reset between calls costs no call its reading.
        a.advance(Some(10));
        let idle = a.begin(Some(10));
        assert_eq!(a.finish(idle, Some(510)).0, Some(0.5));
    }
}
