//! Where environment variables are read from: the process, or a fixed set (for tests and for
//! callers that snapshot the environment once).

use std::collections::HashMap;
use std::fmt;

/// A source of environment variables. `Debug` prints names only, never values.
#[derive(Clone, Default)]
pub struct Environment {
    fixed: Option<HashMap<String, String>>,
}

impl Environment {
    /// This process's environment, read at each lookup.
    pub fn process() -> Self {
        Self { fixed: None }
    }

    /// Exactly these variables and no others.
    pub fn fixed<K: Into<String>, V: Into<String>>(vars: impl IntoIterator<Item = (K, V)>) -> Self {
        Self {
            fixed: Some(
                vars.into_iter()
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect(),
            ),
        }
    }

    /// The variable's value; unset, empty and non-UTF-8 values are all `None`.
    pub fn get(&self, name: &str) -> Option<String> {
        let value = match &self.fixed {
            Some(vars) => vars.get(name).cloned(),
            None => std::env::var(name).ok(),
        };
        value.filter(|v| !v.is_empty())
    }
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.fixed {
            None => f.write_str("Environment(process)"),
            Some(vars) => {
                let mut names: Vec<&String> = vars.keys().collect();
                names.sort();
                f.debug_tuple("Environment").field(&names).finish()
            }
        }
    }
}
