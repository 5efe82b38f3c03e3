//! The loss table's 50 parameters `lossTable[i,j]`: their names, declarations and start
//! values, and the order in which the lifted model visits them.

use crate::LossyGear;
use fmu_runtime::declare::{concat_names, Lens};
use fmu_runtime::{real, Access, Param, Scalar, Var};

use crate::losses::{COLUMNS, MAX_ROWS};

/// The seed's loss table: the single row `[0, 0.25, 0.25, 0.625, 2.5]`.
pub(crate) fn demo_table() -> [[f64; COLUMNS]; MAX_ROWS] {
    let mut table = [[0.0; COLUMNS]; MAX_ROWS];
    table[0] = [0.0, 0.25, 0.25, 0.625, 2.5];
    table
}

/// Access to table cell (I, J), 0-based.
fn cell<L: Lens<Inner = LossyGear>, const I: usize, const J: usize>() -> Access<L::Outer> {
    real!(loss_table[I][J])
}

fn row<L: Lens<Inner = LossyGear>, const I: usize>() -> [Access<L::Outer>; COLUMNS] {
    [
        cell::<L, I, 0>(),
        cell::<L, I, 1>(),
        cell::<L, I, 2>(),
        cell::<L, I, 3>(),
        cell::<L, I, 4>(),
    ]
}

/// The 50 parameters `lossTable[i,j]`: unit, range and meaning per column, row by row.
pub(crate) fn table_variables<L: Lens<Inner = LossyGear>>(vars: &mut Vec<Var<L::Outer>>) {
    let columns: [(Option<&'static str>, f64, Option<f64>, &'static str); COLUMNS] = [
        (
            Some("rad/s"),
            0.0,
            None,
            "Loss table column 1: |w_a|, speed breakpoint (strictly increasing)",
        ),
        (
            None,
            0.0,
            Some(1.0),
            "Loss table column 2: eta_mf1, mesh efficiency when flange a drives, in (0, 1]",
        ),
        (
            None,
            0.0,
            Some(1.0),
            "Loss table column 3: eta_mf2, mesh efficiency when flange b drives, in (0, 1]",
        ),
        (
            Some("N.m"),
            0.0,
            None,
            "Loss table column 4: |tau_bf1|, bearing friction (at flange a) when flange a drives",
        ),
        (
            Some("N.m"),
            0.0,
            None,
            "Loss table column 5: |tau_bf2|, bearing friction (at flange a) when flange b drives",
        ),
    ];
    let rows = [
        row::<L, 0>(),
        row::<L, 1>(),
        row::<L, 2>(),
        row::<L, 3>(),
        row::<L, 4>(),
        row::<L, 5>(),
        row::<L, 6>(),
        row::<L, 7>(),
        row::<L, 8>(),
        row::<L, 9>(),
    ];
    for (i, accesses) in rows.into_iter().enumerate() {
        for (j, access) in accesses.into_iter().enumerate() {
            let (unit, min, max, description) = columns[j];
            let mut v = Var::parameter(TABLE_NAMES[i][j], access)
                .min(min)
                .describe(description);
            v.unit = unit;
            v.max = max;
            vars.push(v);
        }
    }
}

/// The cells of the lifted model's table in the order `table_variables` declares them: row by
/// row, each row column by column.
pub(crate) fn visit_table<D: Scalar>(
    table: &mut [[Param<D>; COLUMNS]; MAX_ROWS],
    f: &mut dyn FnMut(Option<&mut D>),
) {
    for row in table {
        for cell in row {
            f(D::param_mut(cell));
        }
    }
}

/// The names `table_variables` declares, in its order.
pub(crate) const TABLE_ALL: [&str; COLUMNS * MAX_ROWS] = concat_names(&[
    &TABLE_NAMES[0],
    &TABLE_NAMES[1],
    &TABLE_NAMES[2],
    &TABLE_NAMES[3],
    &TABLE_NAMES[4],
    &TABLE_NAMES[5],
    &TABLE_NAMES[6],
    &TABLE_NAMES[7],
    &TABLE_NAMES[8],
    &TABLE_NAMES[9],
]);

/// `lossTable[i,j]` names by 0-based row and column, for error messages.
pub(crate) const TABLE_NAMES: [[&str; COLUMNS]; MAX_ROWS] = {
    macro_rules! row {
        ($n:literal) => {
            [
                concat!("lossTable[", $n, ",1]"),
                concat!("lossTable[", $n, ",2]"),
                concat!("lossTable[", $n, ",3]"),
                concat!("lossTable[", $n, ",4]"),
                concat!("lossTable[", $n, ",5]"),
            ]
        };
    }
    [
        row!("1"),
        row!("2"),
        row!("3"),
        row!("4"),
        row!("5"),
        row!("6"),
        row!("7"),
        row!("8"),
        row!("9"),
        row!("10"),
    ]
};
