//! Why a step of a pass stopped, and how that reads in its run (CONTRACT §11, "Runs"). Its
//! own module, so the steps and the pass that drives them both use it without importing
//! each other.

use crate::db::DbError;
use crate::platforms::PlatformError;

use super::problems::{Problem, ProblemKind};
use super::runs::{Failure, Step};

/// Why a step stopped: the platform said no, or our own database failed (a bug or the
/// environment; logged, and reported without detail).
#[derive(Debug)]
pub enum StepError {
    Platform(PlatformError),
    /// A warehouse file that could not be imported; the message names it.
    BadFile(String),
    Db(DbError),
}

impl From<PlatformError> for StepError {
    fn from(e: PlatformError) -> Self {
        StepError::Platform(e)
    }
}

impl From<DbError> for StepError {
    fn from(e: DbError) -> Self {
        StepError::Db(e)
    }
}

impl From<rusqlite::Error> for StepError {
    fn from(e: rusqlite::Error) -> Self {
        StepError::Db(DbError::from(e))
    }
}

impl StepError {
    pub(super) fn into_failure(self, step: Step, connection_id: i64) -> Failure {
        match self {
            StepError::Platform(e) => Failure { step, code: e.code(), message: e.message().to_string() },
            StepError::BadFile(message) => Failure { step, code: "bad_data", message },
            StepError::Db(e) => {
                log::error!("sync: connection {connection_id}, step {}: database: {e}", step.as_str());
                Failure {
                    step,
                    code: "internal_error",
                    message: "orderbridge could not read or write its database; see the server log.".into(),
                }
            }
        }
    }
}

/// Records what a pass could not do for one item while it went on (CONTRACT §11, "Runs":
/// `problems`): `reference` is the item's id or name.
pub(super) fn note(
    conn: &rusqlite::Connection,
    run_id: i64,
    step: Step,
    kind: ProblemKind,
    reference: &str,
    message: &str,
) -> rusqlite::Result<()> {
    let problem = Problem { step, kind, reference: reference.to_string(), message: message.to_string() };
    super::problems::add(conn, run_id, &problem)
}
