//! Time, injected: handlers ask a [`Clock`], tests set one.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// Now, in UTC.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that stands still until moved; for tests.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<DateTime<Utc>>>);

impl ManualClock {
    /// A clock showing `at`.
    pub fn new(at: DateTime<Utc>) -> Self {
        Self(Arc::new(Mutex::new(at)))
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: chrono::Duration) {
        let mut now = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *now += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
