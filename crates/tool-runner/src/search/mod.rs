//! `grep` and `glob`: a linear-time regular-expression engine, glob patterns, `.gitignore`
//! rules and a tree walker that never leaves the folder it was given.

pub mod regex;

#[cfg(test)]
mod test_dir;
