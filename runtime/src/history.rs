//! Run history in an embedded SQLite database (default `.mzk/runs.db` beside
//! the bundle). Each event is committed as it happens (WAL journal), and the
//! run's state is saved at every settlement, so a crash or Ctrl-C loses
//! nothing already recorded and a paused run can be resumed from another
//! process.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};

use crate::engine::{EventSink, RunState};
use crate::error::Error;
use crate::events::Event;
use crate::status::RunStatus;

/// Where a bundle's history lives unless told otherwise: `.mzk/runs.db`
/// beside its files.
pub fn default_path(bundle_dir: &Path) -> std::path::PathBuf {
    bundle_dir.join(".mzk").join("runs.db")
}

pub struct History {
    db: Connection,
}

/// One line of `mzk runs list`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSummary {
    pub id: String,
    pub workflow: String,
    pub bundle: String,
    pub backend: String,
    pub started_at: String,
    pub updated_at: String,
    pub status: String,
    pub reason: String,
    pub error: Option<String>,
    pub turns: u32,
    pub events: u32,
}

/// One stored event.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredEvent {
    pub seq: u32,
    pub at: String,
    pub event: serde_json::Value,
}

/// UTC now as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn now() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Seconds since the Unix epoch of a time `now` wrote
/// (`2026-12-07T19:07:12.345Z`); `None` for any other text.
pub fn parse_time(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || !text.ends_with('Z') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute) = (num(11..13)?, num(14..16)?);
    let seconds: f64 = text.get(17..text.len() - 1)?.parse().ok()?;
    // Days since 1970-01-01 from a civil date (the inverse of `now`'s).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + hour * 3600 + minute * 60) as f64 + seconds)
}

/// A new run id: sortable by start time, unique per process.
pub fn new_run_id() -> String {
    let t = now();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let compact: String = t.chars().filter(char::is_ascii_digit).take(14).collect();
    format!(
        "{}-{}-{:04x}",
        &compact[..8.min(compact.len())],
        &compact[8.min(compact.len())..],
        (nanos ^ std::process::id()) & 0xffff
    )
}

/// The sink of a run that is kept: records each event and each settlement
/// state in the history, then hands the event on (to the terminal, to the
/// editor). A storage error does not stop the run; the first one is kept for
/// the caller to report once the run ends.
pub struct RecordingSink<F> {
    history: History,
    run_id: String,
    forward: F,
    storage_error: Option<Error>,
}

impl<F: FnMut(&Event) + Send> RecordingSink<F> {
    pub fn new(history: History, run_id: &str, forward: F) -> Self {
        RecordingSink {
            history,
            run_id: run_id.to_string(),
            forward,
            storage_error: None,
        }
    }

    /// The first event or state that could not be stored, if any.
    pub fn storage_error(&self) -> Option<&Error> {
        self.storage_error.as_ref()
    }
}

impl<F: FnMut(&Event) + Send> EventSink for RecordingSink<F> {
    fn emit(&mut self, event: &Event) {
        if let Err(e) = self.history.append(&self.run_id, event) {
            self.storage_error.get_or_insert(e);
        }
        (self.forward)(event);
    }

    fn checkpoint(&mut self, state: &RunState) {
        if let Err(e) = self.history.save_state(state) {
            self.storage_error.get_or_insert(e);
        }
    }
}

impl History {
    pub fn open(path: &Path) -> Result<History, Error> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| Error::HistoryFolder {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let open_error = |source| Error::HistoryOpen {
            path: path.to_path_buf(),
            source,
        };
        let db = Connection::open(path).map_err(open_error)?;
        db.busy_timeout(std::time::Duration::from_secs(5))?;
        db.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS runs (
                 id TEXT PRIMARY KEY,
                 workflow TEXT NOT NULL,
                 bundle TEXT NOT NULL,
                 backend TEXT NOT NULL,
                 started_at TEXT NOT NULL,
                 updated_at TEXT NOT NULL,
                 status TEXT NOT NULL,
                 reason TEXT NOT NULL DEFAULT '',
                 error TEXT,
                 turns INTEGER NOT NULL DEFAULT 0,
                 pid INTEGER,
                 state TEXT
             );
             CREATE TABLE IF NOT EXISTS events (
                 run_id TEXT NOT NULL REFERENCES runs(id),
                 seq INTEGER NOT NULL,
                 at TEXT NOT NULL,
                 type TEXT NOT NULL,
                 data TEXT NOT NULL,
                 PRIMARY KEY (run_id, seq)
             );",
        )
        .map_err(open_error)?;
        let history = History { db };
        history.mark_orphans()?;
        Ok(history)
    }

    pub fn create_run(
        &self,
        id: &str,
        workflow: &str,
        bundle: &str,
        backend: &str,
    ) -> Result<(), Error> {
        let at = now();
        self.db.execute(
            "INSERT INTO runs (id, workflow, bundle, backend, started_at, updated_at, status, pid)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, 'running', ?6)",
            params![id, workflow, bundle, backend, at, std::process::id()],
        )?;
        Ok(())
    }

    /// Appends one event (committed at once).
    pub fn append(&self, run_id: &str, event: &Event) -> Result<(), Error> {
        let data = serde_json::to_string(event)?;
        self.db
            .execute(
                "INSERT INTO events (run_id, seq, at, type, data)
                 VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE run_id = ?1), ?2, ?3, ?4)",
                params![run_id, now(), event.type_name(), data],
            )
            ?;
        Ok(())
    }

    /// Saves the run's state (status, turns, the resumable state).
    pub fn save_state(&self, state: &RunState) -> Result<(), Error> {
        let json = serde_json::to_string(state)?;
        let pid: Option<u32> = (state.status == RunStatus::Running).then(std::process::id);
        self.db.execute(
            "UPDATE runs SET status = ?2, reason = ?3, error = ?4, turns = ?5, state = ?6,
                 updated_at = ?7, pid = ?8 WHERE id = ?1",
            params![
                state.run_id,
                state.status.as_str(),
                state.reason,
                state.error,
                state.turn_count,
                json,
                now(),
                pid
            ],
        )?;
        Ok(())
    }

    /// Marks a resumed run as running in this process.
    pub fn claim(&self, run_id: &str) -> Result<(), Error> {
        self.db.execute(
            "UPDATE runs SET status = 'running', pid = ?2, updated_at = ?3 WHERE id = ?1",
            params![run_id, std::process::id(), now()],
        )?;
        Ok(())
    }

    pub fn load_state(&self, run_id: &str) -> Result<Option<RunState>, Error> {
        let row: Option<Option<String>> = self
            .db
            .query_row(
                "SELECT state FROM runs WHERE id = ?1",
                params![run_id],
                |r| r.get(0),
            )
            .optional()?;
        match row {
            None => Ok(None),
            Some(None) => Ok(Some(RunState {
                run_id: run_id.to_string(),
                ..RunState::default()
            })),
            Some(Some(json)) => {
                serde_json::from_str(&json)
                    .map(Some)
                    .map_err(|source| Error::UnreadableState {
                        run_id: run_id.to_string(),
                        source,
                    })
            }
        }
    }

    pub fn list(&self, limit: usize) -> Result<Vec<RunSummary>, Error> {
        self.summaries(
            "ORDER BY started_at DESC, id DESC LIMIT ?1",
            params![limit as i64],
        )
    }

    pub fn summary(&self, run_id: &str) -> Result<Option<RunSummary>, Error> {
        Ok(self.summaries("WHERE id = ?1", params![run_id])?.pop())
    }

    /// The run an id or the start of one names (`20261207-1907` for
    /// `20261207-190712-3f2a`): the id itself first, else the one run it
    /// begins; several are an error that lists them.
    pub fn find(&self, id_or_prefix: &str) -> Result<Option<RunSummary>, Error> {
        if let Some(run) = self.summary(id_or_prefix)? {
            return Ok(Some(run));
        }
        if id_or_prefix.is_empty() {
            return Ok(None);
        }
        // Compared as bytes: `LIKE` would ignore case and treat `_` and `%`.
        let mut found = self.summaries(
            "WHERE substr(id, 1, length(?1)) = ?1 ORDER BY started_at DESC, id DESC",
            params![id_or_prefix],
        )?;
        match found.len() {
            0 | 1 => Ok(found.pop()),
            _ => Err(Error::RunState(format!(
                "`{id_or_prefix}` begins {} runs ({}); give more of the id",
                found.len(),
                found
                    .iter()
                    .take(5)
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Runs with their event counts, as `list` and `summary` select them.
    fn summaries(&self, tail: &str, args: impl rusqlite::Params) -> Result<Vec<RunSummary>, Error> {
        let mut stmt = self
            .db
            .prepare(&format!(
                "SELECT id, workflow, bundle, backend, started_at, updated_at, status, reason, error, turns,
                        (SELECT COUNT(*) FROM events e WHERE e.run_id = runs.id)
                 FROM runs {tail}"
            ))
            ?;
        let rows = stmt.query_map(args, |r| {
            Ok(RunSummary {
                id: r.get(0)?,
                workflow: r.get(1)?,
                bundle: r.get(2)?,
                backend: r.get(3)?,
                started_at: r.get(4)?,
                updated_at: r.get(5)?,
                status: r.get(6)?,
                reason: r.get(7)?,
                error: r.get(8)?,
                turns: r.get(9)?,
                events: r.get(10)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    pub fn events(&self, run_id: &str) -> Result<Vec<StoredEvent>, Error> {
        let mut stmt = self
            .db
            .prepare("SELECT seq, at, data FROM events WHERE run_id = ?1 ORDER BY seq")?;
        let rows = stmt.query_map(params![run_id], |r| {
            let data: String = r.get(2)?;
            Ok(StoredEvent {
                seq: r.get(0)?,
                at: r.get(1)?,
                event: serde_json::from_str(&data).unwrap_or(serde_json::Value::Null),
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Runs left `running` by a process that no longer exists (killed,
    /// crashed) are marked interrupted, with a closing event.
    fn mark_orphans(&self) -> Result<(), Error> {
        let mut stmt = self
            .db
            .prepare("SELECT id, pid, turns FROM runs WHERE status = 'running'")?;
        let running: Vec<(String, Option<i64>, u32)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        for (id, pid, turns) in running {
            if pid.is_some_and(process_alive) {
                continue;
            }
            self.append(
                &id,
                &Event::RunFinished {
                    status: RunStatus::Interrupted,
                    reason: "interrupted".into(),
                    error: Some("the process running it ended before the run finished".into()),
                    failure_message: None,
                    turns,
                    agent_turns: None,
                    user_replies: None,
                    synthetic_replies: 0,
                },
            )?;
            self.db
                .execute(
                    "UPDATE runs SET status = 'interrupted', reason = 'interrupted', pid = NULL,
                     updated_at = ?2,
                     state = CASE WHEN state IS NULL THEN NULL
                             ELSE json_set(state, '$.status', 'interrupted', '$.reason', 'interrupted') END
                     WHERE id = ?1",
                    params![id, now()],
                )
                ?;
        }
        Ok(())
    }
}

#[cfg(unix)]
fn process_alive(pid: i64) -> bool {
    if pid == std::process::id() as i64 {
        return true;
    }
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // Signal 0 checks existence; EPERM means it exists under another user.
    // SAFETY: kill with signal 0 sends nothing and has no side effects.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(pid: i64) -> bool {
    pid == std::process::id() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_back_as_now_writes_them() {
        let written = now();
        let read = parse_time(&written).unwrap();
        let clock = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            (clock - read).abs() < 2.0,
            "{written} read as {read}, clock {clock}"
        );
        assert_eq!(parse_time("1970-01-01T00:00:00.000Z"), Some(0.0));
        assert_eq!(parse_time("2000-03-01T00:00:01.500Z"), Some(951_868_801.5));
        assert_eq!(parse_time("yesterday"), None);
    }

    #[test]
    fn a_run_is_found_by_the_start_of_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(&dir.path().join("runs.db")).unwrap();
        for id in [
            "20261207-190712-aaaa",
            "20261207-190712-aabb",
            "20261207-200000-cccc",
        ] {
            history
                .create_run(id, "Hello", "bundles/Hello", "scenario")
                .unwrap();
        }
        let found = |p: &str| history.find(p).map(|r| r.map(|r| r.id));
        assert_eq!(
            found("20261207-2").unwrap().as_deref(),
            Some("20261207-200000-cccc")
        );
        assert_eq!(
            found("20261207-190712-aabb").unwrap().as_deref(),
            Some("20261207-190712-aabb")
        );
        assert_eq!(found("2025").unwrap(), None);
        // `_` and `%` are not wildcards, case counts, and nothing names nothing.
        assert_eq!(found("20261207_").unwrap(), None);
        assert_eq!(found("20261207-190712-AA").unwrap(), None);
        assert_eq!(found("").unwrap(), None);
        let ambiguous = found("20261207-1907").unwrap_err().to_string();
        assert!(ambiguous.contains("begins 2 runs"), "{ambiguous}");
    }

    fn turn(agent: &str, turn: u32) -> Event {
        Event::TurnStarted {
            agent: agent.to_string(),
            turn,
        }
    }

    /// Events are stored and forwarded in order; when storing fails (here the
    /// events table is dropped behind the sink's back) the run still gets
    /// every event forwarded and the first error is kept.
    #[test]
    fn the_recording_sink_stores_forwards_and_keeps_the_first_storage_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.db");
        let history = History::open(&path).unwrap();
        history
            .create_run("r1", "Hello", "bundles/Hello", "scenario")
            .unwrap();
        let mut forwarded = Vec::new();
        {
            let mut sink = RecordingSink::new(history, "r1", |e: &Event| {
                forwarded.push(e.type_name().to_string())
            });
            sink.emit(&turn("A", 1));
            sink.emit(&turn("B", 2));
            assert!(sink.storage_error().is_none());
            Connection::open(&path)
                .unwrap()
                .execute_batch("DROP TABLE events")
                .unwrap();
            sink.emit(&turn("C", 3));
            sink.emit(&turn("D", 4));
            let error = sink.storage_error().expect("the failed insert is reported");
            assert!(matches!(error, Error::Storage(_)), "{error:?}");
            assert!(error.to_string().contains("events"), "{error}");
        }
        assert_eq!(forwarded.len(), 4);
    }

    #[test]
    fn stored_events_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(&dir.path().join("runs.db")).unwrap();
        history
            .create_run("r1", "Hello", "bundles/Hello", "scenario")
            .unwrap();
        let mut sink = RecordingSink::new(history, "r1", |_: &Event| {});
        for (i, agent) in ["A", "B", "C"].iter().enumerate() {
            sink.emit(&turn(agent, i as u32 + 1));
        }
        let stored = sink.history.events("r1").unwrap();
        let agents: Vec<_> = stored.iter().map(|e| e.event["agent"].clone()).collect();
        assert_eq!(agents, ["A", "B", "C"]);
        assert_eq!(stored.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2, 3]);
    }
}
