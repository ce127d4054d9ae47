//! The Zarr v3 `reshape` codec's shape rule (zarr-extensions codecs/reshape): the output
//! shape of a configuration's `shape` over an input shape, or the rule it breaks. The
//! converter reads it to know which image a chunk becomes before `jpeg`.

use crate::ConfigValue as V;

fn product(values: &[u64]) -> u64 {
    values.iter().product()
}

/// The output shape of `configuration` (`{"shape": [...]}`) over `input`.
pub fn reshape_shape(configuration: &V, input: &[u64]) -> Result<Vec<u64>, String> {
    let spec = match configuration {
        V::Object(members) => match members.iter().find(|(k, _)| k == "shape") {
            Some((_, V::Array(items))) if !items.is_empty() => items,
            Some((_, other)) => return Err(format!("reshape: configuration.shape must be a non-empty array, got {}", other.describe())),
            None => return Err("reshape: the configuration must have a shape member".into()),
        },
        other => return Err(format!("reshape: the configuration must be an object, got {}", other.describe())),
    };
    let rank = input.len();
    let mut sizes = vec![0u64; spec.len()];
    let mut auto = None;
    let mut last_dim: Option<usize> = None;
    let mut spans: Vec<Option<(usize, usize)>> = vec![None; spec.len()];
    for (i, entry) in spec.iter().enumerate() {
        match entry {
            V::Number(n) if *n == -1.0 => {
                if let Some(a) = auto {
                    return Err(format!("reshape: shape has -1 at positions {a} and {i}; -1 must occur at most once"));
                }
                auto = Some(i);
            }
            V::Number(n) if n.fract() == 0.0 && *n > 0.0 && *n < 9.007e15 => sizes[i] = *n as u64,
            V::Array(dims) => {
                let mut size = 1u64;
                for d in dims {
                    let d = match d {
                        V::Number(d) if d.fract() == 0.0 && *d >= 0.0 && (*d as usize) < rank => *d as usize,
                        other => {
                            return Err(format!(
                                "reshape: shape[{i}]: input dimension {} is not an integer in 0..{}",
                                other.describe(),
                                rank.saturating_sub(1)
                            ))
                        }
                    };
                    if last_dim.is_some_and(|l| d <= l) {
                        return Err(format!("reshape: shape[{i}]: the input dimensions must be in increasing order (reshape never transposes)"));
                    }
                    last_dim = Some(d);
                    size = size.saturating_mul(input[d]);
                }
                if let (Some(V::Number(a)), Some(V::Number(b))) = (dims.first(), dims.last()) {
                    spans[i] = Some((*a as usize, *b as usize));
                }
                sizes[i] = size;
            }
            other => return Err(format!("reshape: shape[{i}] = {} must be a positive integer, an array of input dimensions, or -1", other.describe())),
        }
    }
    let total = product(input);
    if let Some(a) = auto {
        let known: u64 = sizes.iter().enumerate().filter(|&(i, _)| i != a).map(|(_, &s)| s).product();
        if known == 0 || total % known != 0 {
            return Err(format!("reshape: no size for -1 makes the output hold the input's {total} elements"));
        }
        sizes[a] = total / known;
    }
    if product(&sizes) != total {
        return Err(format!("reshape: the output shape {sizes:?} holds {} elements, the input {input:?} {total}", product(&sizes)));
    }
    for (i, span) in spans.iter().enumerate() {
        if let Some((first, last)) = *span {
            if product(&sizes[..i]) != product(&input[..first]) || product(&sizes[i + 1..]) != product(&input[last + 1..]) {
                return Err(format!(
                    "reshape: shape[{i}] over input shape {input:?}: the output dimensions before and after it must cover exactly the input dimensions before and after its own"
                ));
            }
        }
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(json: &str) -> V {
        serde_json::from_str(&format!(r#"{{"shape": {json}}}"#)).unwrap()
    }

    #[test]
    fn folds_and_sizes() {
        assert_eq!(reshape_shape(&shape("[[0, 1], [2]]"), &[16, 64, 32]).unwrap(), vec![1024, 32]);
        assert_eq!(reshape_shape(&shape("[[0, 1], [2], [3]]"), &[4, 8, 16, 3]).unwrap(), vec![32, 16, 3]);
        assert_eq!(reshape_shape(&shape("[64, 32]"), &[1, 1, 64, 32]).unwrap(), vec![64, 32]);
        assert_eq!(reshape_shape(&shape("[-1, 32]"), &[2, 64, 32]).unwrap(), vec![128, 32]);
    }

    #[test]
    fn broken_rules_are_named() {
        assert!(reshape_shape(&shape("[[1, 0]]"), &[2, 3]).unwrap_err().contains("increasing order"));
        assert!(reshape_shape(&shape("[5, 5]"), &[2, 3]).unwrap_err().contains("holds 25 elements"));
        assert!(reshape_shape(&shape("[-1, -1]"), &[2, 3]).unwrap_err().contains("at most once"));
        assert!(reshape_shape(&shape("[[0], [2]]"), &[2, 3, 4]).unwrap_err().contains("holds 8 elements"));
    }
}
