//! Wire building blocks with hand-written serde and schema: maps that keep their order and
//! reject duplicate keys (serde's maps silently keep the last), tensor references, finite f32
//! numbers, and the format/version markers.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasher;
use std::marker::PhantomData;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::Port;

/// A JSON object read in file order, duplicate keys rejected.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedMap<T>(pub Vec<(String, T)>);

impl<T: Serialize> Serialize for NamedMap<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NamedMap<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = NamedMap<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of tensors keyed by name")
            }
            fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
                NamedMap::read(access)
            }
        }
        deserializer.deserialize_map(V(PhantomData))
    }
}

impl<T> NamedMap<T> {
    /// Reads the entries of an object in order, rejecting a key given twice: the body of
    /// every visitor that reads such an object (this type's, and those of types that accept
    /// an object or something else).
    pub(crate) fn read<'de, A: MapAccess<'de>>(mut access: A) -> Result<Self, A::Error>
    where
        T: Deserialize<'de>,
    {
        let mut entries: Vec<(String, T)> = Vec::new();
        // The first entry of each key hash: duplicates are found in O(1) per key
        // without a second copy of every name; keys whose hash another key has are
        // few (collisions) and compared one by one.
        let hasher = std::collections::hash_map::RandomState::new();
        let mut first: HashMap<u64, usize> = HashMap::new();
        let mut collided: Vec<usize> = Vec::new();
        while let Some(key) = access.next_key::<String>()? {
            let index = entries.len();
            let duplicate = match first.entry(hasher.hash_one(&key)) {
                Entry::Vacant(slot) => {
                    slot.insert(index);
                    false
                }
                Entry::Occupied(slot) => {
                    let seen = entries[*slot.get()].0 == key
                        || collided.iter().any(|&i| entries[i].0 == key);
                    if !seen {
                        collided.push(index);
                    }
                    seen
                }
            };
            if duplicate {
                return Err(de::Error::custom(format!(
                    "duplicate key `{}`",
                    crate::shown(&key)
                )));
            }
            let value = access.next_value()?;
            entries.push((key, value));
        }
        Ok(NamedMap(entries))
    }
}

/// Any JSON value, read with every object's duplicate keys refused (serde_json's `Value`
/// keeps the last of two without a word): for the JSON files rime reads that are not graphs
/// (the bench suites).
#[derive(Debug, Clone, PartialEq)]
pub struct UniqueValue(pub serde_json::Value);

impl<'de> Deserialize<'de> for UniqueValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde_json::Value;
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = UniqueValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<UniqueValue, E> {
                Ok(UniqueValue(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<UniqueValue, E> {
                Ok(UniqueValue(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<UniqueValue, E> {
                Ok(UniqueValue(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<UniqueValue, E> {
                serde_json::Number::from_f64(v)
                    .map(|n| UniqueValue(Value::Number(n)))
                    .ok_or_else(|| E::custom("a number JSON cannot hold"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<UniqueValue, E> {
                Ok(UniqueValue(Value::String(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<UniqueValue, E> {
                Ok(UniqueValue(Value::String(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<UniqueValue, E> {
                Ok(UniqueValue(Value::Null))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueValue, A::Error> {
                let mut items = Vec::new();
                while let Some(UniqueValue(v)) = seq.next_element()? {
                    items.push(v);
                }
                Ok(UniqueValue(Value::Array(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<UniqueValue, A::Error> {
                let entries = NamedMap::<UniqueValue>::read(access)?;
                let map = entries.0.into_iter().map(|(k, UniqueValue(v))| (k, v));
                Ok(UniqueValue(Value::Object(map.collect())))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl<T: JsonSchema> JsonSchema for NamedMap<T> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        format!("NamedMap_{}", T::schema_name()).into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let value = generator.subschema_for::<T>();
        json_schema!({
            "type": "object",
            "additionalProperties": value,
        })
    }
}

/// Port bindings of a node in file order, port names checked, duplicates rejected.
#[derive(Debug, Clone, PartialEq)]
pub struct PortMap(pub Vec<(Port, TensorRef)>);

impl Serialize for PortMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (port, r) in &self.0 {
            map.serialize_entry(port.name(), r)?;
        }
        map.end()
    }
}

fn port_names() -> String {
    Port::ALL.map(Port::name).join(", ")
}

impl<'de> Deserialize<'de> for PortMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PortMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object mapping port names to tensor names or uids")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(Port, TensorRef)> = Vec::new();
                while let Some(key) = access.next_key::<String>()? {
                    let Some(port) = Port::from_name(&key) else {
                        return Err(de::Error::custom(format!(
                            "unknown port `{}`, expected one of {}",
                            crate::shown(&key),
                            port_names()
                        )));
                    };
                    if entries.iter().any(|(p, _)| *p == port) {
                        return Err(de::Error::custom(format!("duplicate port `{key}`")));
                    }
                    entries.push((port, access.next_value()?));
                }
                Ok(PortMap(entries))
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl JsonSchema for PortMap {
    fn schema_name() -> Cow<'static, str> {
        "PortMap".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let value = generator.subschema_for::<TensorRef>();
        let names: Vec<&str> = Port::ALL.iter().map(|p| p.name()).collect();
        json_schema!({
            "description": "Port name -> tensor. Ports are the cuDNN frontend's: Q K V O dO Stats Attn_scale Bias SEQ_LEN_Q SEQ_LEN_KV Seed Offset Dropout_mask Dropout_scale Dropout_scale_inv SINK_TOKEN (inputs), dQ dK dV dBias DSINK_TOKEN RNG_DUMP O Stats (outputs).",
            "type": "object",
            "propertyNames": { "enum": names },
            "additionalProperties": value,
        })
    }
}

/// A reference to a tensor: its name, or its uid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorRef {
    /// By name (the key in `tensors`).
    Name(String),
    /// By uid.
    Uid(i64),
}

impl Serialize for TensorRef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            TensorRef::Name(n) => serializer.serialize_str(n),
            TensorRef::Uid(u) => serializer.serialize_i64(*u),
        }
    }
}

impl<'de> Deserialize<'de> for TensorRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TensorRef;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a tensor name (string) or uid (integer)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TensorRef, E> {
                Ok(TensorRef::Name(v.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<TensorRef, E> {
                Ok(TensorRef::Uid(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<TensorRef, E> {
                i64::try_from(v)
                    .map(TensorRef::Uid)
                    .map_err(|_| E::custom(format!("uid {v} does not fit in i64")))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl JsonSchema for TensorRef {
    fn schema_name() -> Cow<'static, str> {
        "TensorRef".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A tensor, by name (string) or uid (integer).",
            "type": ["string", "integer"],
        })
    }
}

/// An f32 written as a JSON number: finite and within f32 range (JSON has no NaN or infinity,
/// and a larger number would silently become infinite), and not so small that it reads as 0
/// (below about 7e-46 a non-zero number would silently become zero).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finite32(pub f32);

impl Serialize for Finite32 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            serializer.serialize_f32(self.0)
        } else {
            // serde_json would write null, which reads back as "absent": write a string that
            // fails to load instead of silently dropping the option.
            serializer.serialize_str(&self.0.to_string())
        }
    }
}

impl<'de> Deserialize<'de> for Finite32 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Finite32;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number within f32 range")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Finite32, E> {
                // Round first: f32::MAX saves as its shortest text 3.4028235e38, which as an
                // f64 is a little above f64::from(f32::MAX) but rounds back to it.
                let rounded = v as f32;
                if !rounded.is_finite() {
                    Err(E::custom(format!("{v} is outside the f32 range")))
                } else if rounded == 0.0 && v != 0.0 {
                    Err(E::custom(format!(
                        "{v:e} is too small for f32 and would read as 0 (the smallest positive f32 is {:e}); write 0 if zero is meant",
                        f32::from_bits(1)
                    )))
                } else {
                    Ok(Finite32(rounded))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Finite32, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Finite32, E> {
                self.visit_f64(v as f64)
            }
        }
        deserializer.deserialize_f64(V)
    }
}

impl JsonSchema for Finite32 {
    fn schema_name() -> Cow<'static, str> {
        "f32".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "number", "format": "float" })
    }
}

/// The format marker, always `"rime.graph"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FormatName;

/// The only value of `format`.
pub const FORMAT: &str = "rime.graph";

impl Serialize for FormatName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(FORMAT)
    }
}

impl<'de> Deserialize<'de> for FormatName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Checked inside the visitor so that serde_json reports the value's own position.
        struct V;
        impl Visitor<'_> for V {
            type Value = FormatName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "the string `{FORMAT}`")
            }
            fn visit_str<E: de::Error>(self, found: &str) -> Result<FormatName, E> {
                if found == FORMAT {
                    Ok(FormatName)
                } else {
                    Err(E::custom(format!(
                        "format is `{}`, expected `{FORMAT}`",
                        crate::shown(found)
                    )))
                }
            }
        }
        deserializer.deserialize_str(V)
    }
}

impl JsonSchema for FormatName {
    fn schema_name() -> Cow<'static, str> {
        "FormatName".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "const": FORMAT })
    }
}

/// The format version, always 1 for this reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Version;

/// The version this crate reads and writes.
pub const VERSION: u64 = 1;

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(VERSION)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Version;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "the integer {VERSION}")
            }
            fn visit_u64<E: de::Error>(self, found: u64) -> Result<Version, E> {
                if found == VERSION {
                    Ok(Version)
                } else {
                    Err(E::custom(format!(
                        "format version {found} is not supported, this rime reads version {VERSION}"
                    )))
                }
            }
            fn visit_i64<E: de::Error>(self, found: i64) -> Result<Version, E> {
                Err(E::custom(format!(
                    "format version {found} is not supported, this rime reads version {VERSION}"
                )))
            }
        }
        deserializer.deserialize_u64(V)
    }
}

impl JsonSchema for Version {
    fn schema_name() -> Cow<'static, str> {
        "Version".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "integer", "const": VERSION })
    }
}
