//! The Zarr v3 / OME-Zarr 0.5 metadata of a converted image: the group (multiscales, and
//! `omero` channels for colour, rescaled or multi-channel images) and each level's array.
//! Member order and values are the npm package's, so the `zarr.json` files are the same text.

use super::levels::Grid;
use super::options::{ChannelAxis, Plan};
use crate::ConfigValue as V;

fn obj(members: Vec<(&str, V)>) -> V {
    V::Object(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn s(text: &str) -> V {
    V::String(text.to_string())
}

fn num(n: impl Into<f64>) -> V {
    V::Number(n.into())
}

fn nums<T: Into<f64> + Copy>(values: &[T]) -> V {
    V::Array(values.iter().map(|&v| num(v)).collect())
}

/// How a level's chunk of (y, x) samples sits in the array: the array's dimensions.
fn with_channel(plan: &Plan, yx: (u32, u32), chunk: bool) -> Vec<u32> {
    if plan.planes > 1 {
        let c = if chunk { 1 } else { plan.planes as u32 };
        return vec![c, yx.0, yx.1];
    }
    match (plan.components, plan.channel_axis) {
        (1, _) => vec![yx.0, yx.1],
        (_, ChannelAxis::First) => vec![3, yx.0, yx.1],
        (_, ChannelAxis::Last) => vec![yx.0, yx.1, 3],
    }
}

/// The array's dimensions of a level of `shape` (height, width).
pub fn array_shape(plan: &Plan, shape: (u32, u32)) -> Vec<u32> {
    with_channel(plan, shape, false)
}

/// A chunk's dimensions for a (y, x) chunk shape.
pub fn chunk_shape(plan: &Plan, yx: (u32, u32)) -> Vec<u32> {
    with_channel(plan, yx, true)
}

pub fn dimension_names(plan: &Plan) -> Vec<&'static str> {
    if plan.planes > 1 {
        return vec!["c", "y", "x"];
    }
    match (plan.components, plan.channel_axis) {
        (1, _) => vec!["y", "x"],
        (_, ChannelAxis::First) => vec!["c", "y", "x"],
        (_, ChannelAxis::Last) => vec!["y", "x", "c"],
    }
}

/// The key of chunk (cy, cx) (of plane c) within its level: `c/…`.
pub fn chunk_key(plan: &Plan, cy: u32, cx: u32, c: u32) -> String {
    if plan.planes > 1 {
        return format!("c/{c}/{cy}/{cx}");
    }
    match (plan.components, plan.channel_axis) {
        (1, _) => format!("c/{cy}/{cx}"),
        (_, ChannelAxis::First) => format!("c/0/{cy}/{cx}"),
        (_, ChannelAxis::Last) => format!("c/{cy}/{cx}/0"),
    }
}

fn transpose() -> V {
    obj(vec![("name", s("transpose")), ("configuration", obj(vec![("order", nums(&[1u8, 2, 0]))]))])
}

/// A level's array metadata.
pub fn level_array(plan: &Plan, shape: (u32, u32), grid: &Grid) -> V {
    let jpeg = obj(vec![("name", s("jpeg")), ("configuration", plan.config.to_value())]);
    let transposed = plan.planes > 1 || (plan.components == 3 && plan.channel_axis == ChannelAxis::First);
    let chunk_codecs = V::Array(if transposed { vec![transpose(), jpeg] } else { vec![jpeg] });
    let codecs = match grid.shard {
        Some(_) => V::Array(vec![obj(vec![
            ("name", s("sharding_indexed")),
            (
                "configuration",
                obj(vec![
                    ("chunk_shape", nums(&chunk_shape(plan, grid.chunk))),
                    ("codecs", chunk_codecs),
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
        ])]),
        None => chunk_codecs,
    };
    obj(vec![
        ("zarr_format", num(3)),
        ("node_type", s("array")),
        ("shape", nums(&array_shape(plan, shape))),
        ("data_type", s("uint8")),
        (
            "chunk_grid",
            obj(vec![
                ("name", s("regular")),
                ("configuration", obj(vec![("chunk_shape", nums(&chunk_shape(plan, grid.shard.unwrap_or(grid.chunk))))])),
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

fn channel(plan: &Plan, label: &str, color: &str) -> V {
    let mut members = vec![
        ("label", s(label)),
        ("color", s(color)),
        ("window", obj(vec![("start", num(0)), ("end", num(255)), ("min", num(0)), ("max", num(255))])),
        ("active", V::Bool(true)),
        ("coefficient", num(1)),
        ("family", s("linear")),
        ("inverted", V::Bool(false)),
    ];
    if let Some((data_type, window)) = plan.rescale {
        members.push((
            "rescaled_from",
            obj(vec![("data_type", s(data_type)), ("start", num(window.min)), ("end", num(window.max))]),
        ));
    }
    obj(members)
}

const PLANE_COLORS: [&str; 7] = ["FF0000", "00FF00", "0000FF", "FFFF00", "FF00FF", "00FFFF", "FFFFFF"];

/// The group's metadata: OME-Zarr 0.5 multiscales over `shapes`, named `name`.
pub fn group(plan: &Plan, shapes: &[(u32, u32)], name: &str) -> V {
    // a c axis of planes is laid out as a channel-first colour image
    let colour = plan.planes > 1 || plan.components == 3;
    let first = plan.planes > 1 || plan.channel_axis == ChannelAxis::First;
    let space = |n: &str| {
        let mut m = vec![("name", s(n)), ("type", s("space"))];
        if let Some(unit) = &plan.unit {
            m.push(("unit", s(unit)));
        }
        obj(m)
    };
    let channel_axis = obj(vec![("name", s("c")), ("type", s("channel"))]);
    let axes = match (colour, first) {
        (false, _) => vec![space("y"), space("x")],
        (true, true) => vec![channel_axis, space("y"), space("x")],
        (true, false) => vec![space("y"), space("x"), channel_axis],
    };
    let size = plan.pixel_size.unwrap_or(1.0);
    let datasets = (0..shapes.len())
        .map(|level| {
            let sc = size * 2f64.powi(level as i32);
            let scale = match (colour, first) {
                (false, _) => vec![sc, sc],
                (true, true) => vec![1.0, sc, sc],
                (true, false) => vec![sc, sc, 1.0],
            };
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
                    obj(vec![("description", s("2×2 area averaging per level")), ("method", s("zarr-jpeg convert"))]),
                ),
            ])]),
        ),
    ];
    let omero = |channels: Vec<V>, model: &str| {
        obj(vec![("channels", V::Array(channels)), ("rdefs", obj(vec![("model", s(model))]))])
    };
    if plan.planes > 1 {
        let channels = (0..plan.planes)
            .map(|i| channel(plan, &format!("channel {i}"), PLANE_COLORS[i % PLANE_COLORS.len()]))
            .collect();
        ome.push(("omero", omero(channels, "color")));
    } else if plan.components == 3 {
        let channels = [("red", "FF0000"), ("green", "00FF00"), ("blue", "0000FF")]
            .iter()
            .map(|(label, color)| channel(plan, label, color))
            .collect();
        ome.push(("omero", omero(channels, "color")));
    } else if plan.rescale.is_some() {
        ome.push(("omero", omero(vec![channel(plan, "gray", "FFFFFF")], "greyscale")));
    }
    obj(vec![("zarr_format", num(3)), ("node_type", s("group")), ("attributes", obj(vec![("ome", obj(ome))]))])
}
