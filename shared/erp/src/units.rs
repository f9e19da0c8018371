//! Units of measure: the closed set an input may name.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A unit of measure. Which units an item may be ordered in is data (the
/// item master); this enum is every unit the ERP knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub enum Uom {
    /// Pieces.
    #[serde(rename = "PCS")]
    Pcs,
    /// Box.
    #[serde(rename = "BOX")]
    Box,
    /// Carton.
    #[serde(rename = "CTN")]
    Ctn,
    /// Kilogram.
    #[serde(rename = "KG")]
    Kg,
    /// Litre.
    #[serde(rename = "L")]
    L,
    /// Metre.
    #[serde(rename = "M")]
    M,
    /// Roll.
    #[serde(rename = "ROLL")]
    Roll,
}

impl Uom {
    /// Every unit the ERP knows.
    pub const ALL: [Self; 7] = [Self::Pcs, Self::Box, Self::Ctn, Self::Kg, Self::L, Self::M, Self::Roll];

    /// The code as written in documents.
    pub fn code(self) -> &'static str {
        match self {
            Self::Pcs => "PCS",
            Self::Box => "BOX",
            Self::Ctn => "CTN",
            Self::Kg => "KG",
            Self::L => "L",
            Self::M => "M",
            Self::Roll => "ROLL",
        }
    }

    /// Parses a stored code.
    pub fn from_code(code: &str) -> Option<Self> {
        [Self::Pcs, Self::Box, Self::Ctn, Self::Kg, Self::L, Self::M, Self::Roll]
            .into_iter()
            .find(|u| u.code() == code)
    }
}

impl fmt::Display for Uom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}
