//! Colour scales: viridis for values (perceptually even, readable in grey
//! and by most colour-blind readers), and a categorical palette for
//! fragments.

/// Viridis at ten evenly spaced stops.
const VIRIDIS: [[u8; 3]; 10] = [
    [0x44, 0x01, 0x54],
    [0x48, 0x28, 0x78],
    [0x3e, 0x4a, 0x89],
    [0x31, 0x68, 0x8e],
    [0x26, 0x82, 0x8e],
    [0x1f, 0x9e, 0x89],
    [0x35, 0xb7, 0x79],
    [0x6e, 0xce, 0x58],
    [0xb5, 0xde, 0x2b],
    [0xfd, 0xe7, 0x25],
];

/// The colour of `t` in `[0, 1]` (clamped; NaN is the lowest).
pub fn viridis(t: f64) -> [u8; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    std::array::from_fn(|k| (a[k] as f64 + (b[k] as f64 - a[k] as f64) * f).round() as u8)
}

/// A linear map of values in `[min, max]` onto the colour scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColourScale {
    /// The value drawn darkest.
    pub min: f64,
    /// The value drawn brightest.
    pub max: f64,
    /// Whether values are placed by their logarithm (counts spanning
    /// orders of magnitude).
    pub log: bool,
}

impl ColourScale {
    /// The scale over `[min, max]`.
    pub fn linear(min: f64, max: f64) -> ColourScale {
        ColourScale {
            min,
            max,
            log: false,
        }
    }

    /// Where `v` falls, from 0 to 1.
    pub fn position(&self, v: f64) -> f64 {
        let f = |x: f64| if self.log { (1.0 + x.max(0.0)).ln() } else { x };
        let (lo, hi) = (f(self.min), f(self.max));
        if hi > lo {
            (f(v) - lo) / (hi - lo)
        } else {
            0.5
        }
    }

    /// The colour of `v`, opaque.
    pub fn rgba(&self, v: f64) -> [u8; 4] {
        let [r, g, b] = viridis(self.position(v));
        [r, g, b, 255]
    }

    /// The colour of `v` as CSS.
    pub fn css(&self, v: f64) -> String {
        let [r, g, b, _] = self.rgba(v);
        format!("#{r:02x}{g:02x}{b:02x}")
    }

    /// A horizontal legend: the gradient, its ends labelled.
    pub fn legend(&self, label: &str) -> String {
        let stops: String = (0..=10)
            .map(|i| {
                let t = i as f64 / 10.0;
                let [r, g, b] = viridis(t);
                format!(r##"<stop offset="{t}" stop-color="#{r:02x}{g:02x}{b:02x}"/>"##)
            })
            .collect();
        // Every legend's gradient is the same: a repeated id (several
        // pages in one notebook) finds an equal one.
        let id = "tessera-viridis";
        format!(
            r##"<svg class="legend" width="320" height="44" role="img"><defs><linearGradient id="{id}">{stops}</linearGradient></defs><rect x="10" y="4" width="300" height="14" fill="url(#{id})"/><text x="10" y="32">{}</text><text x="310" y="32" text-anchor="end">{}</text><text x="160" y="32" text-anchor="middle">{}</text></svg>"##,
            crate::html::number(self.min),
            crate::html::number(self.max),
            crate::html::escape(label)
        )
    }
}

/// Ten distinct colours for fragments (Tableau's).
const CATEGORIES: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// The colour of the `i`th fragment.
pub fn category(i: usize) -> &'static str {
    CATEGORIES[i % CATEGORIES.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_the_scale_are_viridis_ends() {
        let s = ColourScale::linear(-5.0, 5.0);
        assert_eq!(s.rgba(-5.0), [0x44, 0x01, 0x54, 255]);
        assert_eq!(s.rgba(5.0), [0xfd, 0xe7, 0x25, 255]);
        assert_eq!(s.rgba(50.0), s.rgba(5.0));
        assert!(s.position(0.0) == 0.5);
        let log = ColourScale {
            min: 0.0,
            max: 99.0,
            log: true,
        };
        assert!((log.position(9.0) - 0.5).abs() < 1e-9);
    }
}
