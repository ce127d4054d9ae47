//! The axes outside a plane: the time points and z planes of a stack, their spacing, and
//! what the source says of its channels. A stack is converted plane by plane, each plane
//! (with all its channels) through the one pyramid, so memory does not grow with its depth.

/// Which plane of a stack: time point `t`, z plane `z`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlaneIndex {
    pub t: u32,
    pub z: u32,
}

/// A step along an axis: its size in `unit` (an OME-Zarr unit name, e.g. "micrometer",
/// "second").
#[derive(Clone, Debug, PartialEq)]
pub struct Spacing {
    pub value: f64,
    pub unit: &'static str,
}

/// What a file says of one channel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChannelInfo {
    pub name: Option<String>,
    /// "RRGGBB"
    pub color: Option<String>,
}

/// The stack's outer axes (1: the axis is absent) and its channels' names and colours.
#[derive(Clone, Debug, PartialEq)]
pub struct Stack {
    pub t: u32,
    pub z: u32,
    /// between z planes
    pub z_spacing: Option<Spacing>,
    /// between time points
    pub t_increment: Option<Spacing>,
    pub channels: Vec<ChannelInfo>,
}

impl Default for Stack {
    fn default() -> Stack {
        Stack { t: 1, z: 1, z_spacing: None, t_increment: None, channels: Vec::new() }
    }
}

impl Stack {
    /// More than one plane: the arrays gain t and/or z axes.
    pub fn is_stack(&self) -> bool {
        self.t > 1 || self.z > 1
    }

    pub fn count(&self) -> u64 {
        u64::from(self.t) * u64::from(self.z)
    }

    /// Every plane, time points outermost (the order the store's keys sort in).
    pub fn planes(&self) -> impl Iterator<Item = PlaneIndex> {
        let z = self.z;
        (0..self.t).flat_map(move |t| (0..z).map(move |z| PlaneIndex { t, z }))
    }
}

/// The OME-Zarr name of a time unit as OME-XML (or ImageJ) writes it.
pub fn time_unit(unit: &str) -> Option<&'static str> {
    Some(match unit {
        "s" | "sec" | "second" | "seconds" => "second",
        "ms" | "millisecond" => "millisecond",
        "µs" | "μs" | "us" | "microsecond" => "microsecond",
        "ns" | "nanosecond" => "nanosecond",
        "min" | "minute" | "minutes" => "minute",
        "h" | "hour" | "hours" => "hour",
        "d" | "day" => "day",
        _ => return None,
    })
}

/// An OME-XML `Color` (a signed 32-bit RGBA integer) as "RRGGBB".
pub fn ome_color(value: &str) -> Option<String> {
    let rgba = value.trim().parse::<i64>().ok().filter(|v| (i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(v))? as u32;
    Some(format!("{:02X}{:02X}{:02X}", rgba >> 24, (rgba >> 16) & 0xff, (rgba >> 8) & 0xff))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_run_time_outermost() {
        let s = Stack { t: 2, z: 3, ..Stack::default() };
        let order: Vec<(u32, u32)> = s.planes().map(|p| (p.t, p.z)).collect();
        assert_eq!(order, [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
        assert_eq!(s.count(), 6);
        assert!(!Stack::default().is_stack());
    }

    #[test]
    fn ome_colors_are_rgba() {
        assert_eq!(ome_color("-16776961").as_deref(), Some("FF0000")); // 0xFF0000FF
        assert_eq!(ome_color("16711935").as_deref(), Some("00FF00")); // 0x00FF00FF
        assert_eq!(ome_color("-1").as_deref(), Some("FFFFFF"));
        assert_eq!(ome_color("red"), None);
    }
}
