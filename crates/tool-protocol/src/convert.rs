//! Conversions between wire structs and [`Value`], with errors that name the field.
//!
//! Structs are declared with [`wire_struct!`]: every field is written in declaration order,
//! `None` fields are omitted, unknown fields are refused (the protocol version is matched
//! exactly, so an unknown field is a typo or a bug, never a newer peer).

use std::collections::BTreeMap;
use std::fmt;

use crate::json::Value;

/// A field that is missing, of the wrong type, invalid, or not part of the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Dotted path of the field, e.g. `args.timeout_ms`.
    pub field: String,
    pub problem: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.field, self.problem)
    }
}

impl std::error::Error for FieldError {}

impl FieldError {
    pub fn new(field: &str, problem: impl Into<String>) -> Self {
        Self {
            field: field.to_owned(),
            problem: problem.into(),
        }
    }

    fn expected(field: &str, expected: &str, got: &Value) -> Self {
        Self::new(field, format!("expected {expected}, got {}", got.kind()))
    }
}

/// Joins a parent path and a member name.
pub fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

pub trait ToJson {
    fn to_json(&self) -> Value;

    /// The value to write for a struct field, or `None` to omit it.
    fn to_json_field(&self) -> Option<Value> {
        Some(self.to_json())
    }
}

pub trait FromJson: Sized {
    fn from_json(value: &Value, path: &str) -> Result<Self, FieldError>;

    /// The value of an absent field, or `None` when the field is required.
    fn when_missing() -> Option<Self> {
        None
    }
}

impl ToJson for String {
    fn to_json(&self) -> Value {
        Value::String(self.clone())
    }
}

impl FromJson for String {
    fn from_json(value: &Value, path: &str) -> Result<Self, FieldError> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| FieldError::expected(path, "a string", value))
    }
}

impl ToJson for u64 {
    fn to_json(&self) -> Value {
        Value::from(*self)
    }
}

impl FromJson for u64 {
    fn from_json(value: &Value, path: &str) -> Result<Self, FieldError> {
        value
            .as_u64()
            .ok_or_else(|| FieldError::expected(path, "an unsigned integer", value))
    }
}

impl ToJson for i64 {
    fn to_json(&self) -> Value {
        Value::from(*self)
    }
}

impl FromJson for i64 {
    fn from_json(value: &Value, path: &str) -> Result<Self, FieldError> {
        value
            .as_i64()
            .ok_or_else(|| FieldError::expected(path, "an integer", value))
    }
}

impl ToJson for bool {
    fn to_json(&self) -> Value {
        Value::Bool(*self)
    }
}

impl FromJson for bool {
    fn from_json(value: &Value, path: &str) -> Result<Self, FieldError> {
        value
            .as_bool()
            .ok_or_else(|| FieldError::expected(path, "a boolean", value))
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn to_json(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToJson::to_json)
    }

    fn to_json_field(&self) -> Option<Value> {
        self.as_ref().map(ToJson::to_json)
    }
}

impl<T: FromJson> FromJson for Option<T> {
    fn from_json(value: &Value, path: &str) -> Result<Self, FieldError> {
        match value {
            Value::Null => Ok(None),
            other => T::from_json(other, path).map(Some),
        }
    }

    fn when_missing() -> Option<Self> {
        Some(None)
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(ToJson::to_json).collect())
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(value: &Value, path: &str) -> Result<Self, FieldError> {
        match value {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| T::from_json(item, &format!("{path}[{i}]")))
                .collect(),
            other => Err(FieldError::expected(path, "an array", other)),
        }
    }
}

impl ToJson for BTreeMap<String, String> {
    fn to_json(&self) -> Value {
        Value::Object(
            self.iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    }
}

impl FromJson for BTreeMap<String, String> {
    fn from_json(value: &Value, path: &str) -> Result<Self, FieldError> {
        match value {
            Value::Object(members) => {
                let mut map = BTreeMap::new();
                for (key, v) in members {
                    let field = join(path, key);
                    if map
                        .insert(key.clone(), String::from_json(v, &field)?)
                        .is_some()
                    {
                        return Err(FieldError::new(&field, "appears twice"));
                    }
                }
                Ok(map)
            }
            other => Err(FieldError::expected(path, "an object of strings", other)),
        }
    }
}

/// Reads the members of one object, tracking which were used.
pub struct ObjectReader<'a> {
    members: &'a [(String, Value)],
    used: Vec<bool>,
    path: &'a str,
}

impl<'a> ObjectReader<'a> {
    pub fn new(value: &'a Value, path: &'a str) -> Result<Self, FieldError> {
        match value {
            Value::Object(members) => Ok(Self {
                members,
                used: vec![false; members.len()],
                path,
            }),
            other => Err(FieldError::expected(
                if path.is_empty() { "(frame)" } else { path },
                "an object",
                other,
            )),
        }
    }

    /// The field `name`, converted; absent fields use [`FromJson::when_missing`].
    pub fn field<T: FromJson>(&mut self, name: &str) -> Result<T, FieldError> {
        let field_path = join(self.path, name);
        let mut found = None;
        for (i, (key, value)) in self.members.iter().enumerate() {
            if key == name {
                if found.is_some() {
                    return Err(FieldError::new(&field_path, "appears twice"));
                }
                self.used[i] = true;
                found = Some(value);
            }
        }
        match found {
            Some(value) => T::from_json(value, &field_path),
            None => T::when_missing().ok_or_else(|| FieldError::new(&field_path, "missing field")),
        }
    }

    /// Fails on the first member that no [`field`](Self::field) call asked for.
    pub fn finish(self) -> Result<(), FieldError> {
        match self.used.iter().position(|used| !used) {
            Some(i) => Err(FieldError::new(
                &join(self.path, &self.members[i].0),
                "unknown field",
            )),
            None => Ok(()),
        }
    }
}

/// Declares a wire struct and its JSON conversions. Field names are the JSON member names.
#[macro_export]
macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl $crate::convert::ToJson for $name {
            fn to_json(&self) -> $crate::json::Value {
                #[allow(unused_mut)]
                let mut members = Vec::new();
                $(
                    if let Some(v) = $crate::convert::ToJson::to_json_field(&self.$field) {
                        members.push((stringify!($field).to_owned(), v));
                    }
                )*
                $crate::json::Value::Object(members)
            }
        }

        impl $crate::convert::FromJson for $name {
            fn from_json(
                value: &$crate::json::Value,
                path: &str,
            ) -> Result<Self, $crate::convert::FieldError> {
                #[allow(unused_mut)]
                let mut reader = $crate::convert::ObjectReader::new(value, path)?;
                let out = Self { $( $field: reader.field(stringify!($field))?, )* };
                reader.finish()?;
                Ok(out)
            }
        }
    };
}

/// Declares a unit-only enum carried as a string on the wire.
#[macro_export]
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $wire:literal ),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $( $(#[$vmeta])* $variant, )* }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[ $( $name::$variant, )* ];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $wire, )* }
            }

            /// Parses the wire spelling.
            pub fn from_wire(text: &str) -> Option<Self> {
                match text { $( $wire => Some($name::$variant), )* _ => None }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl $crate::convert::ToJson for $name {
            fn to_json(&self) -> $crate::json::Value {
                $crate::json::Value::String(self.as_str().to_owned())
            }
        }

        impl $crate::convert::FromJson for $name {
            fn from_json(
                value: &$crate::json::Value,
                path: &str,
            ) -> Result<Self, $crate::convert::FieldError> {
                let text = <String as $crate::convert::FromJson>::from_json(value, path)?;
                Self::from_wire(&text).ok_or_else(|| {
                    let allowed: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                    $crate::convert::FieldError::new(
                        path,
                        format!("`{text}` is not one of: {}", allowed.join(", ")),
                    )
                })
            }
        }
    };
}
