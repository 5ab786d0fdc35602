//! Reading a hand-written JSON object field by field: each field's path
//! (`attributes[1].fill_value`) goes into its error, and a field the
//! document does not know is an error rather than silently ignored (a typo
//! must not turn into a default).

use crate::SchemaError;
use serde_json::{Map, Value as Json};

/// A JSON object being read, and where it sits in the document.
pub(crate) struct Fields<'j> {
    map: &'j Map<String, Json>,
    path: String,
    known: &'static [&'static str],
}

impl<'j> Fields<'j> {
    /// `v` as an object whose fields may only be `known`.
    pub(crate) fn new(
        v: &'j Json,
        path: impl Into<String>,
        known: &'static [&'static str],
    ) -> Result<Fields<'j>, SchemaError> {
        let path = path.into();
        let map = v
            .as_object()
            .ok_or_else(|| invalid(&path, format!("expected an object, found {}", kind(v))))?;
        if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
            let expected = known.join(", ");
            return Err(invalid(
                &path,
                format!("unknown field `{k}` (expected one of: {expected})"),
            ));
        }
        Ok(Fields { map, path, known })
    }

    /// The path of field `name`, for messages.
    pub(crate) fn path(&self, name: &str) -> String {
        debug_assert!(self.known.contains(&name), "{name} is not a known field");
        if self.path.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    /// Field `name`, absent when missing or null.
    pub(crate) fn get(&self, name: &str) -> Option<&'j Json> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// A string field that must be present.
    pub(crate) fn required_str(&self, name: &str) -> Result<&'j str, SchemaError> {
        self.str(name)?
            .ok_or_else(|| invalid(&self.path(name), "required"))
    }

    /// A string field.
    pub(crate) fn str(&self, name: &str) -> Result<Option<&'j str>, SchemaError> {
        self.get(name)
            .map(|v| {
                v.as_str().ok_or_else(|| {
                    invalid(
                        &self.path(name),
                        format!("expected a string, found {}", kind(v)),
                    )
                })
            })
            .transpose()
    }

    /// A boolean field.
    pub(crate) fn bool(&self, name: &str) -> Result<Option<bool>, SchemaError> {
        self.get(name)
            .map(|v| {
                v.as_bool().ok_or_else(|| {
                    invalid(
                        &self.path(name),
                        format!("expected true or false, found {}", kind(v)),
                    )
                })
            })
            .transpose()
    }

    /// An unsigned integer field of at most `max`.
    pub(crate) fn uint(&self, name: &str, max: u64) -> Result<Option<u64>, SchemaError> {
        self.get(name)
            .map(|v| match v.as_u64() {
                Some(n) if n <= max => Ok(n),
                _ => Err(invalid(
                    &self.path(name),
                    format!("expected an integer from 0 to {max}, found {v}"),
                )),
            })
            .transpose()
    }

    /// A signed integer field within `i32`.
    pub(crate) fn i32(&self, name: &str) -> Result<Option<i32>, SchemaError> {
        self.get(name)
            .map(|v| {
                v.as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| {
                        invalid(
                            &self.path(name),
                            format!("expected a 32-bit integer, found {v}"),
                        )
                    })
            })
            .transpose()
    }

    /// A number field.
    pub(crate) fn f64(&self, name: &str) -> Result<Option<f64>, SchemaError> {
        self.get(name)
            .map(|v| {
                v.as_f64().ok_or_else(|| {
                    invalid(&self.path(name), format!("expected a number, found {v}"))
                })
            })
            .transpose()
    }

    /// An array field, each element with its path.
    pub(crate) fn list(&self, name: &str) -> Result<Vec<(String, &'j Json)>, SchemaError> {
        let Some(v) = self.get(name) else {
            return Ok(Vec::new());
        };
        let items = v.as_array().ok_or_else(|| {
            invalid(
                &self.path(name),
                format!("expected a list, found {}", kind(v)),
            )
        })?;
        let path = self.path(name);
        Ok(items
            .iter()
            .enumerate()
            .map(|(i, x)| (format!("{path}[{i}]"), x))
            .collect())
    }
}

/// The error for a field of the document.
pub(crate) fn invalid(path: &str, message: impl Into<String>) -> SchemaError {
    SchemaError::Invalid {
        field: if path.is_empty() {
            "schema".into()
        } else {
            path.to_owned()
        },
        message: message.into(),
    }
}

/// What kind of JSON value `v` is, for messages.
pub(crate) fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}
