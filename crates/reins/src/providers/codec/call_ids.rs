//! Tool-call ids kept distinct within a turn. A server (hostile or buggy) that gives two calls
//! one id would otherwise have them merged where calls are looked up by id (their argument
//! fragments joined into one broken call, one of them lost) and both answered by one result.
//! The later call gets a fresh id derived from the one sent, the same way whether the turn
//! was streamed or read whole, so its chunks, its response and the history all name it alike.

use crate::message::AssistantContent;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

/// How many ids are scanned before they are kept in a set: few turns make more calls, and
/// a scan of so few costs less than a set's allocation.
const FEW: usize = 8;

/// The ids a turn's calls have been given so far, by hash. Two ids with one hash count as
/// one: the later call is then renamed although it need not be, which is harmless.
#[derive(Debug, Default)]
pub(crate) struct CallIds {
    few: [u64; FEW],
    len: usize,
    many: HashSet<u64>,
    /// For an id given twice, the suffix its next repeat tries first: a server repeating one
    /// id for every call costs one try per call, not one per call before it.
    next_suffix: HashMap<u64, u64>,
}

impl CallIds {
    /// Keeps `id` for the turn's next call, unless an earlier call has it: then it becomes
    /// `{id}_{n}`, with the first `n` from 2 that no call has, and the id as sent is returned.
    pub(crate) fn claim(&mut self, id: &mut String) -> Option<String> {
        let mut hash = hash_of(id);
        let mut sent = None;
        if self.holds(hash) {
            let suffix = self.next_suffix.entry(hash).or_insert(2);
            loop {
                let candidate = format!("{id}_{suffix}");
                *suffix = suffix.saturating_add(1);
                let candidate_hash = hash_of(&candidate);
                if !holds(&self.few[..self.len], &self.many, candidate_hash) {
                    sent = Some(std::mem::replace(id, candidate));
                    hash = candidate_hash;
                    break;
                }
            }
        }
        if self.len < FEW {
            self.few[self.len] = hash;
            self.len += 1;
        } else {
            self.many.insert(hash);
        }
        sent
    }

    fn holds(&self, hash: u64) -> bool {
        holds(&self.few[..self.len], &self.many, hash)
    }
}

fn holds(few: &[u64], many: &HashSet<u64>, hash: u64) -> bool {
    few.contains(&hash) || many.contains(&hash)
}

/// A hash the same in every process and run, so a turn's ids are renamed alike however it
/// is read.
fn hash_of(id: &str) -> u64 {
    BuildHasherDefault::<DefaultHasher>::default().hash_one(id)
}

/// Gives the tool calls among `parts` distinct ids, in order (see [`CallIds::claim`]).
pub(crate) fn distinct_call_ids(parts: &mut [AssistantContent]) {
    let mut ids = CallIds::default();
    for part in parts {
        if let AssistantContent::ToolCall(call) = part {
            ids.claim(&mut call.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(ids: &[&str]) -> Vec<String> {
        let mut seen = CallIds::default();
        ids.iter()
            .map(|id| {
                let mut id = (*id).to_owned();
                seen.claim(&mut id);
                id
            })
            .collect()
    }

    #[test]
    fn a_repeated_id_gets_a_fresh_one_and_distinct_ids_stay() {
        assert_eq!(claimed(&["a", "b", "a", "a"]), ["a", "b", "a_2", "a_3"]);
        // An id the server itself sent that a renamed call would take is not taken twice.
        assert_eq!(claimed(&["a", "a_2", "a"]), ["a", "a_2", "a_3"]);
    }

    #[test]
    fn many_calls_of_one_id_stay_distinct_past_the_scanned_few() {
        let ids = claimed(&["x"; 40]);
        let distinct: HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), 40);
        assert_eq!(ids[39], "x_40");
    }
}
