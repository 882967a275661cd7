//! A layered layout of the graph view, top to bottom: the user (whose
//! replies lead on) and the entry first, each agent one layer below the
//! first node that reaches it, the exits last; within a layer, nodes
//! ordered by the mean position of their neighbours (sweeps down and up),
//! so edges cross less. Rules down or back up go direct, or around the
//! nearer side of the nodes between when the direct curve would cross
//! one; rules within a layer arc under it.
//! An "ask the user" stop sits under its agent. Each label sits on its own
//! edge, at the first point along it where it covers no node and no other
//! label.

use std::collections::VecDeque;

use super::{Curve, GraphView, NodeKind};

/// Node and label metrics, in CSS pixels at zoom 1 (the page's fonts:
/// node labels 14 px, edge labels 12 px).
const NODE_HEIGHT: f64 = 38.0;
const STOP_HEIGHT: f64 = 26.0;
const NODE_CHAR: f64 = 8.4;
const LABEL_CHAR: f64 = 6.9;
const LABEL_HEIGHT: f64 = 18.0;
const LAYER_GAP: f64 = 150.0;
const NODE_GAP: f64 = 70.0;
const MARGIN: f64 = 40.0;
/// Past this many edges (no real bundle comes near: AppGenerator has 80)
/// edges are drawn direct and labels at their middle, so that the
/// quadratic search for free room cannot make a generated bundle's page
/// take minutes.
const CAREFUL_EDGES: usize = 1500;
/// Longest edge label drawn whole; the page shows the rest on hover.
const LABEL_CHARS: usize = 42;

#[derive(Clone, Copy)]
struct Rect {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Rect {
    fn around(x: f64, y: f64, width: f64, height: f64) -> Rect {
        Rect {
            x0: x - width / 2.0,
            y0: y - height / 2.0,
            x1: x + width / 2.0,
            y1: y + height / 2.0,
        }
    }

    fn overlaps(&self, other: &Rect) -> bool {
        self.x0 < other.x1 && other.x0 < self.x1 && self.y0 < other.y1 && other.y0 < self.y1
    }
}

/// An edge label as drawn: at most 42 characters (the page shows the
/// whole of it on hover).
pub fn shown_label(label: &str) -> String {
    if label.chars().count() <= LABEL_CHARS {
        return label.to_string();
    }
    let cut: String = label.chars().take(LABEL_CHARS - 1).collect();
    format!("{cut}…")
}

pub(super) fn lay_out(view: &mut GraphView) {
    let n = view.nodes.len();
    for node in &mut view.nodes {
        let (width, height) = match node.kind {
            NodeKind::AskUser => (64.0, STOP_HEIGHT),
            NodeKind::Complete | NodeKind::Failed => (
                node.label.chars().count() as f64 * NODE_CHAR + 28.0,
                STOP_HEIGHT + 4.0,
            ),
            _ => (
                (node.label.chars().count() as f64 * NODE_CHAR + 32.0).max(110.0),
                NODE_HEIGHT,
            ),
        };
        node.width = width;
        node.height = height;
    }
    let placed = |i: usize| !matches!(view.nodes[i].kind, NodeKind::AskUser);
    let exit = |i: usize| matches!(view.nodes[i].kind, NodeKind::Complete | NodeKind::Failed);
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in &view.edges {
        if placed(e.to) && !successors[e.from].contains(&e.to) {
            successors[e.from].push(e.to);
        }
    }

    // Layers: breadth first from the user (whose replies lead on, so on
    // top) and the entry, then from each node still unplaced (never
    // reached), in the order they were declared.
    let mut layer: Vec<Option<usize>> = vec![None; n];
    let roots: Vec<usize> = (0..n)
        .filter(|&i| view.nodes[i].kind == NodeKind::User)
        .chain((0..n).filter(|&i| view.nodes[i].entry))
        .chain(0..n)
        .filter(|&i| placed(i) && !exit(i))
        .collect();
    for root in roots {
        if layer[root].is_some() {
            continue;
        }
        layer[root] = Some(0);
        let mut queue = VecDeque::from([root]);
        while let Some(at) = queue.pop_front() {
            let next = layer[at].unwrap_or(0) + 1;
            for &to in &successors[at] {
                if layer[to].is_none() && !exit(to) {
                    layer[to] = Some(next);
                    queue.push_back(to);
                }
            }
        }
    }
    let last = layer.iter().flatten().max().map_or(0, |l| l + 1);
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); last + 1];
    for (i, at) in layer.iter_mut().enumerate() {
        if !placed(i) {
            continue;
        }
        let l = if exit(i) { last } else { at.unwrap_or(0) };
        *at = Some(l);
        layers[l].push(i);
    }
    layers.retain(|l| !l.is_empty());
    for (l, nodes) in layers.iter().enumerate() {
        for &i in nodes {
            layer[i] = Some(l);
        }
    }

    // Order within layers: mean position of the neighbours in the layer
    // above (sweeping down), then below (sweeping up).
    let mut predecessors: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (from, tos) in successors.iter().enumerate() {
        for &to in tos {
            predecessors[to].push(from);
        }
    }
    let mut position = vec![0.0; n];
    let number = |layers: &[Vec<usize>], position: &mut [f64]| {
        for nodes in layers {
            for (k, &i) in nodes.iter().enumerate() {
                position[i] = k as f64;
            }
        }
    };
    number(&layers, &mut position);
    for sweep in 0..6 {
        let down = sweep % 2 == 0;
        let order: Vec<usize> = if down {
            (1..layers.len()).collect()
        } else {
            (0..layers.len().saturating_sub(1)).rev().collect()
        };
        for l in order {
            let neighbour_layer = if down { l - 1 } else { l + 1 };
            let mut keyed: Vec<(f64, usize)> = layers[l]
                .iter()
                .map(|&i| {
                    let near: Vec<f64> = if down {
                        &predecessors[i]
                    } else {
                        &successors[i]
                    }
                    .iter()
                    .filter(|&&j| layer[j] == Some(neighbour_layer))
                    .map(|&j| position[j])
                    .collect();
                    let key = if near.is_empty() {
                        position[i]
                    } else {
                        near.iter().sum::<f64>() / near.len() as f64
                    };
                    (key, i)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            layers[l] = keyed.into_iter().map(|(_, i)| i).collect();
            number(&layers, &mut position);
        }
    }

    // Coordinates: each layer a centred row; the rows as wide as the widest.
    let row_width = |nodes: &[usize], view: &GraphView| {
        nodes.iter().map(|&i| view.nodes[i].width).sum::<f64>()
            + NODE_GAP * nodes.len().saturating_sub(1) as f64
    };
    let widest = layers
        .iter()
        .map(|l| row_width(l, view))
        .fold(0.0, f64::max);
    for (l, nodes) in layers.iter().enumerate() {
        let mut x = MARGIN + (widest - row_width(nodes, view)) / 2.0;
        let y = MARGIN + NODE_HEIGHT / 2.0 + l as f64 * LAYER_GAP;
        for &i in nodes {
            let node = &mut view.nodes[i];
            node.x = x + node.width / 2.0;
            node.y = y;
            x += node.width + NODE_GAP;
        }
    }
    // An "ask the user" stop under the lower right corner of its agent.
    for i in 0..n {
        if let Some(owner) = view.nodes[i].owner {
            let (ox, oy, ow, oh) = {
                let o = &view.nodes[owner];
                (o.x, o.y, o.width, o.height)
            };
            let node = &mut view.nodes[i];
            node.x = ox + ow / 2.0 - node.width / 2.0 + 14.0;
            node.y = oy + oh / 2.0 + 34.0;
        }
    }

    route_edges(view, &layer);
    fit_to_margin(view);
}

/// Moves the drawing so that everything (detours and labels included)
/// starts at the margin, and sizes it.
fn fit_to_margin(view: &mut GraphView) {
    let (mut left, mut top) = (f64::MAX, f64::MAX);
    let (mut right, mut bottom) = (f64::MIN, f64::MIN);
    let mut cover = |x0: f64, y0: f64, x1: f64, y1: f64| {
        left = left.min(x0);
        top = top.min(y0);
        right = right.max(x1);
        bottom = bottom.max(y1);
    };
    for node in &view.nodes {
        cover(
            node.x - node.width / 2.0,
            node.y - node.height / 2.0,
            node.x + node.width / 2.0,
            node.y + node.height / 2.0,
        );
    }
    for edge in &view.edges {
        for point in edge.curves.iter().flatten() {
            cover(point.0, point.1, point.0, point.1);
        }
        cover(
            edge.label_x - edge.label_width / 2.0,
            edge.label_y - LABEL_HEIGHT / 2.0,
            edge.label_x + edge.label_width / 2.0,
            edge.label_y + LABEL_HEIGHT / 2.0,
        );
    }
    if left > right {
        view.width = 2.0 * MARGIN;
        view.height = 2.0 * MARGIN;
        return;
    }
    let (dx, dy) = (MARGIN - left, MARGIN - top);
    for node in &mut view.nodes {
        node.x += dx;
        node.y += dy;
    }
    for edge in &mut view.edges {
        for point in edge.curves.iter_mut().flatten() {
            point.0 += dx;
            point.1 += dy;
        }
        edge.label_x += dx;
        edge.label_y += dy;
    }
    view.width = right - left + 2.0 * MARGIN;
    view.height = bottom - top + 2.0 * MARGIN;
}

/// A cubic Bézier curve's point at `t`.
fn cubic(p: Curve, t: f64) -> (f64, f64) {
    let u = 1.0 - t;
    let (a, b, c, d) = (u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t);
    (
        a * p[0].0 + b * p[1].0 + c * p[2].0 + d * p[3].0,
        a * p[0].1 + b * p[1].1 + c * p[2].1 + d * p[3].1,
    )
}

/// The point at `t` (0 to 1) along curves drawn one after the other, each
/// taking an equal share of `t`.
pub fn point_along(curves: &[Curve], t: f64) -> (f64, f64) {
    let Some(last) = curves.len().checked_sub(1) else {
        return (0.0, 0.0);
    };
    let scaled = t.clamp(0.0, 1.0) * curves.len() as f64;
    let k = (scaled.floor() as usize).min(last);
    cubic(curves[k], scaled - k as f64)
}

/// A straight line as a curve.
fn line(a: (f64, f64), b: (f64, f64)) -> Curve {
    let third = ((b.0 - a.0) / 3.0, (b.1 - a.1) / 3.0);
    [
        a,
        (a.0 + third.0, a.1 + third.1),
        (a.0 + 2.0 * third.0, a.1 + 2.0 * third.1),
        b,
    ]
}

/// Routes every edge and places its label.
fn route_edges(view: &mut GraphView, layer: &[Option<usize>]) {
    let n = view.nodes.len();
    // Ports: a node's outgoing edges leave spread along its bottom, its
    // incoming ones arrive spread along its top, in the order of the other end.
    let mut outs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut ins: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, e) in view.edges.iter().enumerate() {
        outs[e.from].push(k);
        ins[e.to].push(k);
    }
    let x_of = |view: &GraphView, i: usize| view.nodes[i].x;
    for list in outs.iter_mut() {
        list.sort_by(|&a, &b| {
            x_of(view, view.edges[a].to).total_cmp(&x_of(view, view.edges[b].to))
        });
    }
    for list in ins.iter_mut() {
        list.sort_by(|&a, &b| {
            x_of(view, view.edges[a].from).total_cmp(&x_of(view, view.edges[b].from))
        });
    }
    let port = |list: &[usize], k: usize, x: f64, width: f64| {
        let at = list.iter().position(|&e| e == k).unwrap_or(0) as f64;
        let count = list.len() as f64;
        x - width * 0.35 + width * 0.7 * (at + 1.0) / (count + 1.0)
    };
    let boxes: Vec<Rect> = view
        .nodes
        .iter()
        .map(|node| Rect::around(node.x, node.y, node.width + 8.0, node.height + 8.0))
        .collect();
    let careful = view.edges.len() <= CAREFUL_EDGES;
    let mut obstacles = if careful { boxes.clone() } else { Vec::new() };
    let right_edge = view
        .nodes
        .iter()
        .map(|node| node.x + node.width / 2.0)
        .fold(0.0, f64::max);
    let left_edge = view
        .nodes
        .iter()
        .map(|node| node.x - node.width / 2.0)
        .fold(f64::MAX, f64::min);
    let mut detours = 0usize;
    for k in 0..view.edges.len() {
        let (from, to) = (view.edges[k].from, view.edges[k].to);
        let (s, t) = (&view.nodes[from], &view.nodes[to]);
        let span = match (layer[from], layer[to]) {
            _ if t.kind == NodeKind::AskUser => 1,
            (Some(a), Some(b)) => b as i64 - a as i64,
            _ => 1,
        };
        let curves: Vec<Curve> = if from == to {
            // A rule back to its own source: a loop on its right.
            let (x, y) = (s.x + s.width / 2.0, s.y);
            vec![[
                (x, y - 8.0),
                (x + 46.0, y - 30.0),
                (x + 46.0, y + 30.0),
                (x, y + 8.0),
            ]]
        } else if span == 0 {
            // Along a layer: an arc under the row, bottom to bottom.
            let x0 = port(&outs[from], k, s.x, s.width);
            let x3 = port(&ins[to], k, t.x, t.width);
            let y = s.y + s.height / 2.0;
            let dip = 46.0 + ((x3 - x0).abs() / 12.0).min(40.0);
            vec![[
                (x0, y),
                (x0, y + dip),
                (x3, y + dip),
                (x3, t.y + t.height / 2.0),
            ]]
        } else {
            // Down from the bottom into the top, or back up from the top
            // into the bottom; around the nodes in between when the direct
            // curve would cross one of them.
            let down = span > 0;
            let side = if down { 1.0 } else { -1.0 };
            let x0 = port(&outs[from], k, s.x, s.width);
            let x3 = port(&ins[to], k, t.x, t.width);
            let y0 = s.y + side * s.height / 2.0;
            let y3 = t.y - side * t.height / 2.0;
            let bend = ((y3 - y0) * 0.5).abs().max(20.0) * side;
            let direct = vec![[(x0, y0), (x0, y0 + bend), (x3, y3 - bend), (x3, y3)]];
            let crosses = |curves: &[Curve]| {
                (1..40).any(|i| {
                    let (x, y) = point_along(curves, i as f64 / 40.0);
                    boxes.iter().enumerate().any(|(b, r)| {
                        b != from && b != to && r.x0 < x && x < r.x1 && r.y0 < y && y < r.y1
                    })
                })
            };
            if careful && (span.abs() > 1 || !down) && crosses(&direct) {
                detours += 1;
                let spread = 14.0 * (detours % 6) as f64;
                let middle = (x0 + x3) / 2.0;
                let wx = if middle - left_edge < right_edge - middle {
                    left_edge - 24.0 - spread
                } else {
                    right_edge + 24.0 + spread
                };
                let (ya, yb) = (y0 + 40.0 * side, y3 - 40.0 * side);
                vec![
                    [
                        (x0, y0),
                        (x0, y0 + 20.0 * side),
                        (wx, ya - 20.0 * side),
                        (wx, ya),
                    ],
                    line((wx, ya), (wx, yb)),
                    [
                        (wx, yb),
                        (wx, yb + 20.0 * side),
                        (x3, y3 - 20.0 * side),
                        (x3, y3),
                    ],
                ]
            } else {
                direct
            }
        };
        let label = shown_label(&view.edges[k].label);
        let width = label.chars().count() as f64 * LABEL_CHAR + 12.0;
        // Along the edge, the first point where the label covers nothing.
        let mut chosen = point_along(&curves, 0.5);
        let tries: &[f64] = if careful {
            &[0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78, 0.15, 0.85]
        } else {
            &[]
        };
        for &t in tries {
            let (x, y) = point_along(&curves, t);
            let rect = Rect::around(x, y, width, LABEL_HEIGHT);
            if !obstacles.iter().any(|o| o.overlaps(&rect)) {
                chosen = (x, y);
                break;
            }
        }
        if careful {
            obstacles.push(Rect::around(chosen.0, chosen.1, width, LABEL_HEIGHT));
        }
        let edge = &mut view.edges[k];
        edge.curves = curves;
        edge.label_x = chosen.0;
        edge.label_y = chosen.1;
        edge.label_width = width;
    }
}
