//! How the tower layer is built.

use super::{ForLayer, RobotsConfig};
use crate::front::layer::RobotsLayer;

impl RobotsConfig<ForLayer> {
    /// The tower layer.
    pub fn build(self) -> RobotsLayer {
        RobotsLayer::from_gate(self.gate())
    }
}
