//! Partitioning: which partition (node, server) owns each row of a partitioned database.
//!
//! A [`Partitioner`] answers two questions for the distributed engines (DOCC's cluster, ROCOCO's
//! servers): how each table is placed ([`Placement`]) and, for partitioned tables, which of the
//! `0..partitions()` partitions owns a key. It is a pure function of its configuration: every
//! node of a cluster builds the same partitioner and gets the same answers, with no coordination.
//!
//! - [`Placement::Partitioned`]: each key lives at exactly one partition, [`Partitioner::partition_of`].
//! - [`Placement::Replicated`]: every partition holds the whole table (read-only tables such as
//!   TPC-C's ITEM); `partition_of` is an error.
//! - [`Placement::FollowsHome`]: insert-only tables whose keys carry no partition (TPC-C's
//!   HISTORY): a row lives at the partition of the transaction that inserts it (its home), is
//!   never read by transactions, and is merged across partitions for checks; `partition_of` is an
//!   error.
//!
//! Two generic partitioners live here ([`HashPartitioner`], [`RangePartitioner`]); workloads
//! provide the ones that follow their keys (TPC-C by warehouse or by district, YCSB by key range,
//! SmallBank by customer, in `txlab-workload`).

use crate::error::Error;
use crate::table::TableId;

/// Largest number of partitions a partitioner accepts (the largest cluster).
pub const MAX_PARTITIONS: u32 = 1024;

/// How a table is placed across partitions (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Placement {
    /// Each key at exactly one partition.
    Partitioned,
    /// A full copy at every partition (read-only tables).
    Replicated,
    /// Rows at the partition of the transaction that inserts them (insert-only, never read).
    FollowsHome,
}

/// Maps tables and keys to partitions (module docs).
pub trait Partitioner: Send + Sync {
    /// The number of partitions, `1..=MAX_PARTITIONS`.
    fn partitions(&self) -> u32;

    /// How `table` is placed. Tables the partitioner does not know are
    /// [`Placement::Partitioned`], and [`partition_of`](Self::partition_of) names them in its
    /// error.
    fn placement(&self, table: TableId) -> Placement;

    /// The partition that owns `key` of a partitioned `table`, in `0..partitions()`. An error
    /// names the table or key it cannot place: an unknown table, a key outside the table's key
    /// space, or a table that is not [`Placement::Partitioned`].
    fn partition_of(&self, table: TableId, key: u64) -> Result<u32, Error>;
}

/// Checks a partition count.
pub fn check_partitions(partitions: u32) -> Result<u32, Error> {
    if !(1..=MAX_PARTITIONS).contains(&partitions) {
        return Err(Error::invalid(
            "partitions",
            partitions,
            format!("between 1 and {MAX_PARTITIONS}"),
        ));
    }
    Ok(partitions)
}

/// The error of [`Partitioner::partition_of`] for a table that is not partitioned by key.
pub fn not_partitioned(table: TableId, placement: Placement) -> Error {
    let why = match placement {
        Placement::Replicated => "it is replicated: every partition holds it",
        Placement::FollowsHome => "its rows follow the home partition of the inserting transaction",
        Placement::Partitioned => "it is partitioned",
    };
    Error::invalid(
        "table",
        table.0,
        format!("keys of table {} have no owning partition: {why}", table.0),
    )
}

/// Per-table placements of the generic partitioners: table `i` is `placements[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Placements {
    partitions: u32,
    placements: Vec<Placement>,
}

impl Placements {
    fn new(partitions: u32, tables: usize) -> Result<Self, Error> {
        Ok(Self {
            partitions: check_partitions(partitions)?,
            placements: vec![Placement::Partitioned; tables],
        })
    }

    fn set(&mut self, table: TableId, placement: Placement) -> Result<(), Error> {
        let count = self.placements.len();
        let slot = self
            .placements
            .get_mut(table.0 as usize)
            .ok_or(Error::UnknownTable { id: table.0, count })?;
        *slot = placement;
        Ok(())
    }

    fn get(&self, table: TableId) -> Placement {
        self.placements
            .get(table.0 as usize)
            .copied()
            .unwrap_or(Placement::Partitioned)
    }

    /// Checks that `table` exists and is partitioned.
    fn partitioned(&self, table: TableId) -> Result<(), Error> {
        match self.placements.get(table.0 as usize) {
            None => Err(Error::UnknownTable {
                id: table.0,
                count: self.placements.len(),
            }),
            Some(Placement::Partitioned) => Ok(()),
            Some(&other) => Err(not_partitioned(table, other)),
        }
    }
}

/// Places every key by a hash of the key (Fibonacci hashing), for workloads whose keys have no
/// locality worth keeping. Tables are partitioned unless set otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashPartitioner {
    placements: Placements,
}

impl HashPartitioner {
    /// `partitions` partitions over a schema of `tables` tables, all partitioned.
    pub fn new(partitions: u32, tables: usize) -> Result<Self, Error> {
        Ok(Self {
            placements: Placements::new(partitions, tables)?,
        })
    }

    /// Places `table` as `placement` instead.
    pub fn with_placement(mut self, table: TableId, placement: Placement) -> Result<Self, Error> {
        self.placements.set(table, placement)?;
        Ok(self)
    }
}

impl Partitioner for HashPartitioner {
    fn partitions(&self) -> u32 {
        self.placements.partitions
    }

    fn placement(&self, table: TableId) -> Placement {
        self.placements.get(table)
    }

    fn partition_of(&self, table: TableId, key: u64) -> Result<u32, Error> {
        self.placements.partitioned(table)?;
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The high 32 bits are the well-mixed ones; scale them onto 0..partitions.
        Ok((((h >> 32) * u64::from(self.placements.partitions)) >> 32) as u32)
    }
}

/// Splits each partitioned table's key space `0..space` into `partitions` contiguous ranges of
/// (nearly) equal size: key `k` is at partition `k * partitions / space`. Keys at or above the
/// table's space are an error naming the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangePartitioner {
    placements: Placements,
    spaces: Vec<u64>,
}

impl RangePartitioner {
    /// `partitions` partitions; table `i`'s keys are `0..spaces[i]` (each space at least 1).
    pub fn new(partitions: u32, spaces: Vec<u64>) -> Result<Self, Error> {
        if let Some(i) = spaces.iter().position(|&s| s == 0) {
            return Err(Error::invalid(
                "key space",
                0,
                format!("table {i}: a range-partitioned table needs at least 1 key"),
            ));
        }
        Ok(Self {
            placements: Placements::new(partitions, spaces.len())?,
            spaces,
        })
    }

    /// Places `table` as `placement` instead.
    pub fn with_placement(mut self, table: TableId, placement: Placement) -> Result<Self, Error> {
        self.placements.set(table, placement)?;
        Ok(self)
    }
}

impl Partitioner for RangePartitioner {
    fn partitions(&self) -> u32 {
        self.placements.partitions
    }

    fn placement(&self, table: TableId) -> Placement {
        self.placements.get(table)
    }

    fn partition_of(&self, table: TableId, key: u64) -> Result<u32, Error> {
        self.placements.partitioned(table)?;
        let space = self.spaces[table.0 as usize];
        if key >= space {
            return Err(Error::KeyOutOfRange {
                table: table.0,
                key,
                capacity: space,
            });
        }
        Ok((u128::from(key) * u128::from(self.placements.partitions) / u128::from(space)) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_partition_counts_and_key_spaces_are_refused_by_value() {
        for n in [0, MAX_PARTITIONS + 1] {
            let e = HashPartitioner::new(n, 1).unwrap_err();
            assert!(e.to_string().contains(&format!("partitions = {n}")), "{e}");
        }
        let e = RangePartitioner::new(2, vec![10, 0]).unwrap_err();
        assert!(e.to_string().contains("table 1"), "{e}");
        let e = HashPartitioner::new(2, 1)
            .unwrap()
            .with_placement(TableId(3), Placement::Replicated)
            .unwrap_err();
        assert_eq!(e, Error::UnknownTable { id: 3, count: 1 });
    }

    #[test]
    fn ranges_are_contiguous_balanced_and_bounded() {
        let p = RangePartitioner::new(3, vec![10]).unwrap();
        let owners: Vec<u32> = (0..10)
            .map(|k| p.partition_of(TableId(0), k).unwrap())
            .collect();
        assert_eq!(owners, vec![0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
        let e = p.partition_of(TableId(0), 10).unwrap_err();
        assert!(e.to_string().contains("key 10 is out of range"), "{e}");
        let e = p.partition_of(TableId(1), 0).unwrap_err();
        assert_eq!(e, Error::UnknownTable { id: 1, count: 1 });
    }

    #[test]
    fn hashing_spreads_keys_over_every_partition() {
        let p = HashPartitioner::new(4, 1).unwrap();
        let mut counts = [0u32; 4];
        for k in 0..4000 {
            counts[p.partition_of(TableId(0), k).unwrap() as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..=1200).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(
            HashPartitioner::new(1, 1)
                .unwrap()
                .partition_of(TableId(0), u64::MAX),
            Ok(0)
        );
    }

    #[test]
    fn tables_not_partitioned_by_key_have_no_owner() {
        let p = RangePartitioner::new(2, vec![10, 10, 10])
            .unwrap()
            .with_placement(TableId(1), Placement::Replicated)
            .unwrap()
            .with_placement(TableId(2), Placement::FollowsHome)
            .unwrap();
        assert_eq!(p.placement(TableId(0)), Placement::Partitioned);
        assert_eq!(p.placement(TableId(1)), Placement::Replicated);
        let e = p.partition_of(TableId(1), 3).unwrap_err();
        assert!(e.to_string().contains("replicated"), "{e}");
        let e = p.partition_of(TableId(2), 3).unwrap_err();
        assert!(e.to_string().contains("home partition"), "{e}");
    }
}
