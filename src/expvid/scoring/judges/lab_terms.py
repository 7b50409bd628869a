"""Common laboratory abbreviations and formulas, so "DMSO" = "dimethyl sulfoxide" without a model.

Whole-answer lookups only: an answer is replaced by its canonical term when the whole normalised
answer is a known name, never inside a longer phrase. Kept short and unambiguous on purpose:
an entry that could mean two things in a lab ("PC", "PS") is left out.
"""

from __future__ import annotations

from functools import cache

from expvid.scoring.judges.normalise import normalise_answer

_GROUPS: tuple[tuple[str, ...], ...] = (
    ("DMSO", "dimethyl sulfoxide", "dimethyl sulphoxide", "dimethylsulfoxide"),
    ("LPS", "lipopolysaccharide"),
    ("ELISA", "enzyme-linked immunosorbent assay"),
    ("EtOH", "ethanol", "ethyl alcohol"),
    ("MeOH", "methanol", "methyl alcohol"),
    ("iPrOH", "IPA", "isopropanol", "isopropyl alcohol", "2-propanol"),
    ("DMEM", "Dulbecco's modified Eagle medium", "Dulbecco's modified Eagle's medium"),
    ("FBS", "fetal bovine serum", "foetal bovine serum"),
    ("BSA", "bovine serum albumin"),
    ("EDTA", "ethylenediaminetetraacetic acid"),
    ("PFA", "paraformaldehyde"),
    ("SDS", "sodium dodecyl sulfate", "sodium dodecyl sulphate"),
    ("SDS-PAGE", "sodium dodecyl sulfate polyacrylamide gel electrophoresis"),
    ("HRP", "horseradish peroxidase"),
    ("DAPI", "4',6-diamidino-2-phenylindole"),
    ("ATP", "adenosine triphosphate"),
    ("DNA", "deoxyribonucleic acid"),
    ("RNA", "ribonucleic acid"),
    ("siRNA", "small interfering RNA"),
    ("qPCR", "quantitative PCR", "real-time PCR", "quantitative polymerase chain reaction"),
    ("IHC", "immunohistochemistry"),
    ("CNS", "central nervous system"),
    ("EEG", "electroencephalography", "electroencephalogram"),
    ("ECG", "EKG", "electrocardiography", "electrocardiogram"),
    ("fMRI", "functional magnetic resonance imaging"),
    ("NO", "nitric oxide"),
    ("HPLC", "high-performance liquid chromatography", "high performance liquid chromatography"),
    ("NMR", "nuclear magnetic resonance"),
    ("XRD", "X-ray diffraction"),
    ("AFM", "atomic force microscopy"),
    ("FTIR", "Fourier-transform infrared spectroscopy", "Fourier transform infrared spectroscopy"),
    ("MOF", "metal-organic framework"),
    ("PDMS", "polydimethylsiloxane"),
    ("PEG", "polyethylene glycol"),
    ("THF", "tetrahydrofuran"),
    ("DCM", "dichloromethane", "methylene chloride"),
    ("DMF", "dimethylformamide", "N,N-dimethylformamide"),
    ("EtOAc", "ethyl acetate"),
    ("NaCl", "sodium chloride"),
    ("KCl", "potassium chloride"),
    ("NaOH", "sodium hydroxide"),
    ("KOH", "potassium hydroxide"),
    ("HCl", "hydrochloric acid", "hydrogen chloride"),
    ("H2SO4", "sulfuric acid", "sulphuric acid"),
    ("HNO3", "nitric acid"),
    ("H2O", "water"),
    ("H2O2", "hydrogen peroxide"),
    ("CO2", "carbon dioxide"),
    ("N2", "nitrogen gas", "nitrogen"),
    ("O2", "oxygen gas", "oxygen"),
    ("Ar", "argon"),
    ("He", "helium"),
    ("NaHCO3", "sodium bicarbonate", "sodium hydrogen carbonate"),
    ("CaCl2", "calcium chloride"),
    ("MgCl2", "magnesium chloride"),
    ("MgSO4", "magnesium sulfate", "magnesium sulphate"),
    ("KMnO4", "potassium permanganate"),
    ("AgNO3", "silver nitrate"),
    ("TiO2", "titanium dioxide"),
    ("ZnO", "zinc oxide"),
    ("Au", "gold"),
    ("Ag", "silver"),
    ("Cu", "copper"),
    ("Pd", "palladium"),
    ("Pt", "platinum"),
    ("Fe", "iron"),
)


@cache
def _table() -> dict[str, str]:
    table: dict[str, str] = {}
    for group in _GROUPS:
        canonical = normalise_answer(group[0])
        for name in group:
            table[normalise_answer(name)] = canonical
    return table


def canonical_term(normalised: str) -> str:
    """The canonical form of a whole normalised answer, or the answer itself when unknown."""
    return _table().get(normalised, normalised)
