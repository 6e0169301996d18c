//! Raw access to a memory store's records, for tests of records changed behind the store's
//! back (corrupt, foreign, written by another release): what the database tests do with SQL.

use super::{MemoryStore, Record};
use crate::store::now_millis;

impl MemoryStore {
    /// Overwrites a run's stored record verbatim: for tests of corrupt or foreign records.
    #[doc(hidden)]
    pub fn put_raw(&self, run_id: &str, format: i64, json: &str) {
        let now = now_millis();
        self.lock().insert(
            run_id.to_owned(),
            Record {
                version: 1,
                format,
                status: "suspended".to_owned(),
                state: json.to_owned(),
                owner: None,
                token: None,
                lease_until: 0,
                created_at: now,
                updated_at: now,
                // As a row written behind a database store's back leaves its column empty.
                agent_name: None,
                journal: Vec::new(),
                decisions: Vec::new(),
                audit: Vec::new(),
                snapshots: Vec::new(),
            },
        );
    }

    /// Overwrites a run's stored state verbatim, keeping its version, lease, journal and
    /// decisions: for tests of records changed behind the store's back.
    #[doc(hidden)]
    pub fn put_raw_state(&self, run_id: &str, json: &str) {
        if let Some(record) = self.lock().get_mut(run_id) {
            record.state = json.to_owned();
        }
    }

    /// Overwrites the format a run's record is tagged with, keeping everything else: for
    /// tests of records written by another release (as the database tests change the
    /// `format` column).
    #[doc(hidden)]
    pub fn put_raw_format(&self, run_id: &str, format: i64) {
        if let Some(record) = self.lock().get_mut(run_id) {
            record.format = format;
        }
    }

    /// Overwrites the status a run's record is listed under, keeping everything else: for
    /// tests of records another release wrote finished or left running (as the database tests
    /// fill the `status` column).
    #[doc(hidden)]
    pub fn put_raw_status(&self, run_id: &str, status: &str) {
        if let Some(record) = self.lock().get_mut(run_id) {
            record.status = status.to_owned();
        }
    }

    /// Overwrites when a run's record was last written, keeping everything else: for tests
    /// of runs written in the same millisecond (as the database tests set `updated_at`).
    #[doc(hidden)]
    pub fn put_raw_updated_at(&self, run_id: &str, updated_at_ms: i64) {
        if let Some(record) = self.lock().get_mut(run_id) {
            record.updated_at = updated_at_ms;
        }
    }

    /// A run's stored record as it is: `(version, format, status, state)`, for tests that
    /// check a record was left untouched.
    #[doc(hidden)]
    pub fn raw_record(&self, run_id: &str) -> Option<(i64, i64, String, String)> {
        self.lock().get(run_id).map(|record| {
            (
                record.version,
                record.format,
                record.status.clone(),
                record.state.clone(),
            )
        })
    }
}
