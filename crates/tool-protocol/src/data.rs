//! [`Data`]: bytes on the wire, as UTF-8 text when they are text and base64 otherwise, always
//! with an explicit `encoding` member.

use crate::base64;
use crate::convert::{FieldError, FromJson, ObjectReader, ToJson};
use crate::json::Value;
use crate::wire_enum;

wire_enum! {
    /// How the `data` member of a [`Data`] object is encoded.
    pub enum Encoding {
        Utf8 = "utf8",
        Base64 = "base64",
    }
}

/// A byte payload: `{"encoding":"utf8","data":"…"}` or `{"encoding":"base64","data":"…"}`.
#[derive(Clone, PartialEq, Eq)]
pub enum Data {
    Text(String),
    Bytes(Vec<u8>),
}

impl std::fmt::Debug for Data {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Data::Text(s) if s.len() <= 64 => write!(f, "Text({s:?})"),
            Data::Text(s) => write!(f, "Text({} bytes)", s.len()),
            Data::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
        }
    }
}

impl Default for Data {
    fn default() -> Self {
        Data::Text(String::new())
    }
}

impl Data {
    /// Text when `bytes` are UTF-8, base64 otherwise.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        match String::from_utf8(bytes) {
            Ok(text) => Data::Text(text),
            Err(e) => Data::Bytes(e.into_bytes()),
        }
    }

    /// Always base64, whatever the bytes are (file transfers).
    pub fn binary(bytes: Vec<u8>) -> Self {
        Data::Bytes(bytes)
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Data::Text(s) => s.as_bytes(),
            Data::Bytes(b) => b,
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            Data::Text(s) => s.into_bytes(),
            Data::Bytes(b) => b,
        }
    }

    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }

    pub fn encoding(&self) -> Encoding {
        match self {
            Data::Text(_) => Encoding::Utf8,
            Data::Bytes(_) => Encoding::Base64,
        }
    }

    /// The bytes as text, replacing invalid UTF-8 (for display only).
    pub fn to_text_lossy(&self) -> String {
        String::from_utf8_lossy(self.as_bytes()).into_owned()
    }
}

impl From<&str> for Data {
    fn from(s: &str) -> Self {
        Data::Text(s.to_owned())
    }
}

impl From<String> for Data {
    fn from(s: String) -> Self {
        Data::Text(s)
    }
}

impl ToJson for Data {
    fn to_json(&self) -> Value {
        let data = match self {
            Data::Text(s) => s.clone(),
            Data::Bytes(b) => base64::encode(b),
        };
        Value::Object(vec![
            ("encoding".into(), self.encoding().to_json()),
            ("data".into(), Value::String(data)),
        ])
    }
}

impl FromJson for Data {
    fn from_json(value: &Value, path: &str) -> Result<Self, FieldError> {
        let mut reader = ObjectReader::new(value, path)?;
        let encoding: Encoding = reader.field("encoding")?;
        let data: String = reader.field("data")?;
        reader.finish()?;
        match encoding {
            Encoding::Utf8 => Ok(Data::Text(data)),
            Encoding::Base64 => base64::decode(&data)
                .map(Data::Bytes)
                .map_err(|e| FieldError::new(&crate::convert::join(path, "data"), e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_stays_text_and_bytes_go_base64() {
        assert_eq!(
            Data::from_bytes(b"hi".to_vec()).to_json().to_json_string(),
            r#"{"encoding":"utf8","data":"hi"}"#
        );
        assert_eq!(
            Data::from_bytes(vec![0xff, 0]).to_json().to_json_string(),
            r#"{"encoding":"base64","data":"/wA="}"#
        );
    }

    #[test]
    fn bad_base64_names_the_field() {
        let value = Value::parse(r#"{"encoding":"base64","data":"@@@@"}"#).unwrap();
        let err = Data::from_json(&value, "args.content").unwrap_err();
        assert_eq!(err.field, "args.content.data");
        let value = Value::parse(r#"{"encoding":"hex","data":""}"#).unwrap();
        let err = Data::from_json(&value, "args.content").unwrap_err();
        assert_eq!(err.field, "args.content.encoding");
        assert_eq!(err.problem, "`hex` is not one of: utf8, base64");
    }
}
