//! The hook for the non-visible write rule (NWR; the NWR paper, §4–§6): `Mvto<Rec, NoNwr>` is
//! plain MVTO, `Mvto<Rec, Nwr>` will be MVTO+NWR.
//!
//! MVTO+NWR (paper §6.1.1) may *omit* a blind write whose version would be invisible to every
//! reader, validating an additional version order against a 128-bit pivot object per record
//! instead of installing a version. The hook point is marked `NWR HOOK` in `crate::commit`, at the
//! start of each write's installation: a rule that returns `true` from [`WriteRule::try_omit`]
//! has taken responsibility for the write, and the engine does not link a version for it.
//! Only [`NoNwr`] exists today; it never omits, and the branch folds away.

use crate::record::MvtoRecord;

/// How commit treats a write before installing it (module docs).
pub trait WriteRule: Send + Sync + 'static {
    /// The engine's name under this rule (`mvto` for plain MVTO).
    const ENGINE_NAME: &'static str;

    /// Whether the write of `ts` to `record` was omitted (so no version must be installed).
    fn try_omit(record: &MvtoRecord, ts: u64, blind: bool) -> bool;
}

/// Plain MVTO: every write installs a version.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoNwr;

impl WriteRule for NoNwr {
    const ENGINE_NAME: &'static str = "mvto";

    #[inline(always)]
    fn try_omit(_record: &MvtoRecord, _ts: u64, _blind: bool) -> bool {
        false
    }
}
