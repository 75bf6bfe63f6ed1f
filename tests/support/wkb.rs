//! GeoPackage geometry blobs decoded by hand, independently of the library,
//! for the outside side of a comparison.

/// One WKB geometry decoded by hand, independently of the library: its type
/// (1 to 6; Z and M dropped) and its x, y in order. Reads from `at`.
pub fn hand_wkb(b: &[u8], at: &mut usize) -> (u32, Vec<f64>) {
    let little = b[*at] == 1;
    // The `n` bytes at `i`, little-endian first.
    let le = |i: usize, n: usize| -> Vec<u8> {
        let mut v = b[i..i + n].to_vec();
        if !little {
            v.reverse();
        }
        v
    };
    let u32_at = |i: usize| u32::from_le_bytes(le(i, 4).try_into().unwrap());
    let f64_at = |i: usize| f64::from_le_bytes(le(i, 8).try_into().unwrap());
    let code = u32_at(*at + 1);
    *at += 5;
    let dims = 2 + usize::from(matches!(code / 1000, 1 | 2)) + 2 * usize::from(code / 1000 == 3);
    let points = |at: &mut usize, n: usize, xy: &mut Vec<f64>| {
        for _ in 0..n {
            xy.extend([f64_at(*at), f64_at(*at + 8)]);
            *at += 8 * dims;
        }
    };
    let mut xy = Vec::new();
    match code % 1000 {
        1 => points(at, 1, &mut xy),
        2 => {
            let n = u32_at(*at) as usize;
            *at += 4;
            points(at, n, &mut xy);
        }
        3 => {
            let rings = u32_at(*at);
            *at += 4;
            for _ in 0..rings {
                let n = u32_at(*at) as usize;
                *at += 4;
                points(at, n, &mut xy);
            }
        }
        4..=6 => {
            let members = u32_at(*at);
            *at += 4;
            for _ in 0..members {
                xy.extend(hand_wkb(b, at).1);
            }
        }
        t => panic!("no such WKB type in the fixtures: {t}"),
    }
    (code % 1000, xy)
}

/// The WKB type and x, y of a GeoPackage blob, by hand: the header is 8
/// bytes plus the envelope its flags announce.
pub fn hand_blob(b: &[u8]) -> (u32, Vec<f64>) {
    let envelope = [0, 32, 48, 48, 64][usize::from((b[3] >> 1) & 7)];
    hand_wkb(b, &mut (8 + envelope))
}
