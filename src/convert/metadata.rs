//! The Zarr v3 / OME-Zarr 0.5 metadata of a converted image: the group (multiscales, and
//! `omero` channels for colour, rescaled or multi-channel images) and each level's array.
//! Member order and values are the npm package's, so the `zarr.json` files are the same text.

use super::histogram::DataWindow;
use super::levels::Grid;
use super::options::{ChannelAxis, Plan};
use super::stack::PlaneIndex;
use crate::ConfigValue as V;

pub(super) fn obj(members: Vec<(&str, V)>) -> V {
    V::Object(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

pub(super) fn s(text: &str) -> V {
    V::String(text.to_string())
}

pub(super) fn num(n: impl Into<f64>) -> V {
    V::Number(n.into())
}

fn nums<T: Into<f64> + Copy>(values: &[T]) -> V {
    V::Array(values.iter().map(|&v| num(v)).collect())
}

/// Axis `name`'s length in level `l` of `yx` (height, width), or in a chunk of `yx`.
fn axis_length(plan: &Plan, l: usize, name: &str, yx: (u32, u32), chunk: bool) -> u32 {
    match name {
        "t" if !chunk => plan.stack.t,
        "z" if !chunk => plan.level_z(l),
        "z" => plan.level_depth(l),
        "c" if plan.planes > 1 && !chunk => plan.planes as u32,
        "c" if plan.planes == 1 => 3,
        "y" => yx.0,
        "x" => yx.1,
        _ => 1,
    }
}

/// The array's dimensions of level `l`, of `shape` (height, width).
pub fn array_shape(plan: &Plan, l: usize, shape: (u32, u32)) -> Vec<u32> {
    dimension_names(plan).iter().map(|n| axis_length(plan, l, n, shape, false)).collect()
}

/// A chunk's dimensions at level `l` for a (y, x) chunk shape.
pub fn chunk_shape(plan: &Plan, l: usize, yx: (u32, u32)) -> Vec<u32> {
    dimension_names(plan).iter().map(|n| axis_length(plan, l, n, yx, true)).collect()
}

/// The axes present, in OME-Zarr's order (t, c, z, y, x), or y, x, c for a colour image whose
/// channels are last.
pub fn dimension_names(plan: &Plan) -> Vec<&'static str> {
    let colour = plan.planes > 1 || plan.components == 3;
    let first = plan.planes > 1 || plan.channel_axis == ChannelAxis::First;
    let mut names = Vec::with_capacity(5);
    if plan.stack.t > 1 {
        names.push("t");
    }
    if colour && first {
        names.push("c");
    }
    if plan.stack.z > 1 {
        names.push("z");
    }
    names.extend(["y", "x"]);
    if colour && !first {
        names.push("c");
    }
    names
}

/// The key of chunk (cy, cx) (of plane c) of level `l` holding the level's plane `at`: `c/…`.
pub fn chunk_key(plan: &Plan, l: usize, at: PlaneIndex, cy: u32, cx: u32, c: u32) -> String {
    let mut key = String::from("c");
    for name in dimension_names(plan) {
        let index = match name {
            "t" => at.t,
            "z" => at.z / plan.level_depth(l),
            "c" if plan.planes > 1 => c,
            "y" => cy,
            "x" => cx,
            _ => 0,
        };
        key.push('/');
        key.push_str(&index.to_string());
    }
    key
}

fn transpose(order: &[u32]) -> V {
    obj(vec![("name", s("transpose")), ("configuration", obj(vec![("order", nums(order))]))])
}

/// The codecs of a chunk: the jpeg codec takes (y, x) or (y, x, 3), so a channel-first chunk
/// is transposed to channels last, and a stack's chunk, with its axes of length 1 (t, a
/// grayscale plane's c), is reshaped to an image (which also drops a grayscale c: no
/// transpose) whose height is its z planes' one above the other.
fn chunk_codecs(plan: &Plan, l: usize, chunk: (u32, u32), jpeg: V) -> Vec<V> {
    let names = dimension_names(plan);
    let reshaped = plan.stack.is_stack();
    let mut codecs = Vec::with_capacity(3);
    let c = names.iter().position(|&n| n == "c").filter(|&c| c + 1 != names.len() && (plan.planes == 1 || !reshaped));
    if let Some(c) = c {
        let order: Vec<u32> = (0..names.len() as u32).filter(|&i| i as usize != c).chain([c as u32]).collect();
        codecs.push(transpose(&order));
    }
    if reshaped {
        let height = chunk.0 * plan.level_depth(l);
        let image = if plan.planes == 1 && plan.components == 3 { vec![height, chunk.1, 3] } else { vec![height, chunk.1] };
        codecs.push(obj(vec![("name", s("reshape")), ("configuration", obj(vec![("shape", nums(&image))]))]));
    }
    codecs.push(jpeg);
    codecs
}

/// The `sharding_indexed` codec over chunks of `chunk_shape` coded by `codecs`, its index
/// at the end (`bytes` little-endian, then `crc32c`).
pub(super) fn sharding_codec(chunk_shape: V, codecs: V) -> V {
    obj(vec![
        ("name", s("sharding_indexed")),
        (
            "configuration",
            obj(vec![
                ("chunk_shape", chunk_shape),
                ("codecs", codecs),
                (
                    "index_codecs",
                    V::Array(vec![
                        obj(vec![("name", s("bytes")), ("configuration", obj(vec![("endian", s("little"))]))]),
                        obj(vec![("name", s("crc32c"))]),
                    ]),
                ),
                ("index_location", s("end")),
            ]),
        ),
    ])
}

/// Level `l`'s array metadata.
pub fn level_array(plan: &Plan, l: usize, shape: (u32, u32), grid: &Grid) -> V {
    let jpeg = obj(vec![("name", s("jpeg")), ("configuration", plan.config.to_value())]);
    let chunk_codecs = V::Array(chunk_codecs(plan, l, grid.chunk, jpeg));
    let codecs = match grid.shard {
        Some(_) => V::Array(vec![sharding_codec(nums(&chunk_shape(plan, l, grid.chunk)), chunk_codecs)]),
        None => chunk_codecs,
    };
    obj(vec![
        ("zarr_format", num(3)),
        ("node_type", s("array")),
        ("shape", nums(&array_shape(plan, l, shape))),
        ("data_type", s("uint8")),
        (
            "chunk_grid",
            obj(vec![
                ("name", s("regular")),
                ("configuration", obj(vec![("chunk_shape", nums(&chunk_shape(plan, l, grid.shard.unwrap_or(grid.chunk))))])),
            ]),
        ),
        (
            "chunk_key_encoding",
            obj(vec![("name", s("default")), ("configuration", obj(vec![("separator", s("/"))]))]),
        ),
        ("fill_value", num(0)),
        ("codecs", codecs),
        ("dimension_names", V::Array(dimension_names(plan).into_iter().map(s).collect())),
        ("attributes", obj(vec![])),
    ])
}

fn channel(plan: &Plan, label: &str, color: &str, index: usize) -> V {
    let w = plan.windows.get(index).copied().flatten().unwrap_or(DataWindow::FULL);
    omero_channel(label, color, w, plan.rescale)
}

/// An `omero` channel: its label, colour ("RRGGBB") and window, and the 16-bit window mapped
/// to 0–255 where the samples were rescaled.
pub(super) fn omero_channel(label: &str, color: &str, w: DataWindow, rescale: Option<(&'static str, super::options::Window)>) -> V {
    let mut members = vec![
        ("label", s(label)),
        ("color", s(color)),
        ("window", obj(vec![("start", num(w.start)), ("end", num(w.end)), ("min", num(w.min)), ("max", num(w.max))])),
        ("active", V::Bool(true)),
        ("coefficient", num(1)),
        ("family", s("linear")),
        ("inverted", V::Bool(false)),
    ];
    if let Some((data_type, window)) = rescale {
        members.push((
            "rescaled_from",
            obj(vec![("data_type", s(data_type)), ("start", num(window.min)), ("end", num(window.max))]),
        ));
    }
    obj(members)
}

/// The `omero` metadata of `channels` under rendering model `model` ("color", "greyscale").
pub(super) fn omero(channels: Vec<V>, model: &str) -> V {
    obj(vec![("channels", V::Array(channels)), ("rdefs", obj(vec![("model", s(model))]))])
}

/// An RGB image's three channels, each made by `channel(label, color)`.
pub(super) fn rgb_channels(channel: impl Fn(&str, &str) -> V) -> Vec<V> {
    [("red", "FF0000"), ("green", "00FF00"), ("blue", "0000FF")].iter().map(|(label, color)| channel(label, color)).collect()
}

const PLANE_COLORS: [&str; 7] = ["FF0000", "00FF00", "0000FF", "FFFF00", "FF00FF", "00FFFF", "FFFFFF"];

/// The group's metadata: OME-Zarr 0.5 multiscales over `shapes`, named `name`.
pub fn group(plan: &Plan, shapes: &[(u32, u32)], name: &str) -> V {
    let axis = |name: &str, kind: &str, unit: Option<&str>| {
        let mut m = vec![("name", s(name)), ("type", s(kind))];
        if let Some(unit) = unit {
            m.push(("unit", s(unit)));
        }
        obj(m)
    };
    let stack = &plan.stack;
    let z_unit = stack.z_spacing.as_ref().map(|z| z.unit).or(plan.unit.as_deref());
    let names = dimension_names(plan);
    let axes = names
        .iter()
        .map(|&n| match n {
            "t" => axis("t", "time", stack.t_increment.as_ref().map(|t| t.unit)),
            "c" => axis("c", "channel", None),
            "z" => axis("z", "space", z_unit),
            _ => axis(n, "space", plan.unit.as_deref()),
        })
        .collect();
    let size = plan.pixel_size.unwrap_or(1.0);
    let datasets = (0..shapes.len())
        .map(|level| {
            let sc = size * 2f64.powi(level as i32);
            let scale: Vec<f64> = names
                .iter()
                .map(|&n| match n {
                    "t" => stack.t_increment.as_ref().map_or(1.0, |t| t.value),
                    "z" => stack.z_spacing.as_ref().map_or(1.0, |z| z.value) * plan.level_z_factor(level),
                    "c" => 1.0,
                    _ => sc,
                })
                .collect();
            obj(vec![
                ("path", V::String(level.to_string())),
                (
                    "coordinateTransformations",
                    V::Array(vec![obj(vec![("type", s("scale")), ("scale", nums(&scale))])]),
                ),
            ])
        })
        .collect();
    let mut ome = vec![
        ("version", s("0.5")),
        (
            "multiscales",
            V::Array(vec![obj(vec![
                ("name", s(name)),
                ("axes", V::Array(axes)),
                ("datasets", V::Array(datasets)),
                ("type", s("mean")),
                (
                    "metadata",
                    obj(vec![
                        ("description", s(if plan.downsample_z { "2×2×2 (x, y, z) averaging per level" } else { "2×2 area averaging per level" })),
                        ("method", s("zarr-jpeg convert")),
                    ]),
                ),
            ])]),
        ),
    ];
    if plan.planes > 1 {
        let channels = (0..plan.planes)
            .map(|i| {
                let stated = stack.channels.get(i);
                let label = stated.and_then(|c| c.name.clone()).unwrap_or_else(|| format!("channel {i}"));
                let color = stated.and_then(|c| c.color.as_deref()).unwrap_or(PLANE_COLORS[i % PLANE_COLORS.len()]);
                channel(plan, &label, color, i)
            })
            .collect();
        ome.push(("omero", omero(channels, "color")));
    } else if plan.components == 3 {
        ome.push(("omero", omero(rgb_channels(|label, color| channel(plan, label, color, usize::MAX)), "color")));
    } else if plan.rescale.is_some() {
        ome.push(("omero", omero(vec![channel(plan, "gray", "FFFFFF", usize::MAX)], "greyscale")));
    }
    obj(vec![("zarr_format", num(3)), ("node_type", s("group")), ("attributes", obj(vec![("ome", obj(ome))]))])
}
