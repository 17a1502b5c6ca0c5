"""Write the input of examples/adult_missing.json: the UCI Adult design with 'allow' on its
incomplete columns.

Domains come from ``adult.names`` (public documentation), never from the data. The example is
this input with its criteria's ε and its forecast derived by the design assistant on the public
half of Adult (``scripts/adult_data.py``), at the low end of ``expected_n`` (issue 28)::

    python scripts/make_adult_missing.py out/adult_missing_input.json
    workbench design out/adult_missing_input.json out/adult/adult_raw_public_proxy.csv \
        --eps-gen 2 --target-p 0.7 --check-repetitions 20 --out examples/adult_missing.json
    workbench freeze examples/adult_missing.json examples/adult_missing.frozen.json
"""

from __future__ import annotations

import json
import sys

WORKCLASS = ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
             "State-gov", "Without-pay", "Never-worked"]
EDUCATION = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th",
             "HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters",
             "Prof-school", "Doctorate"]
MARITAL = ["Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
           "Married-spouse-absent", "Married-AF-spouse"]
OCCUPATION = ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
              "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
              "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
              "Armed-Forces"]
RELATIONSHIP = ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"]
RACE = ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"]
SEX = ["Female", "Male"]
COUNTRY = ["United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
           "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
           "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico",
           "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan",
           "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand",
           "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong",
           "Holand-Netherlands"]
INCOME = ["<=50K", ">50K"]
ALLOW = {"missing": "allow", "max_missing_rate": 0.2}


def column(name, ctype, domain=None, bounds=None, source=None, **extra):
    out = {"name": name, "type": ctype, "missing": "forbid", "out_of_domain": "error"}
    out |= {"domain": domain} if domain is not None else {"bounds": bounds}
    if source:
        out["source"] = source
    return out | extra


COLUMNS = [
    column("age", "integer", bounds=[17, 90]),
    column("workclass", "categorical", WORKCLASS, **ALLOW),
    column("education", "categorical", EDUCATION),
    column("marital_status", "categorical", MARITAL, source="marital-status"),
    column("occupation", "categorical", OCCUPATION, **ALLOW),
    column("relationship", "categorical", RELATIONSHIP),
    column("race", "categorical", RACE),
    column("sex", "categorical", SEX),
    column("capital_gain", "integer", bounds=[0, 99999], source="capital-gain"),
    column("capital_loss", "integer", bounds=[0, 4356], source="capital-loss"),
    column("hours_per_week", "integer", bounds=[1, 99], source="hours-per-week"),
    column("native_country", "categorical", COUNTRY, source="native-country", **ALLOW),
    column("Y", "categorical", INCOME),
]
IDENTITY = {"alternatives": [{"name": "id", "kind": "identity"}]}
BINS = {
    "age": [20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70],
    "capital_gain": [1, 3000, 5000, 7500, 10000, 20000],
    "capital_loss": [1, 1500, 2000, 2500],
    "hours_per_week": [20, 30, 40, 41, 50, 60],
}
MISSING_COLUMNS = ["workclass", "occupation", "native_country"]
#: The public half of the raw extract (``scripts/adult_data.py``), the network's structure
#: comes from it (issue 28), pinned by its SHA-256.
PROXY = "out/adult/adult_raw_public_proxy.csv"
PROXY_SHA256 = "c3a02d6b369ad4c285512c86507c14c8d61601ec4fa7dd36e31bb26c25d2dcf5"


def transformations():
    cols = {}
    for c in COLUMNS:
        if c["name"] in BINS:
            cols[c["name"]] = {"alternatives": [{"name": "bins", "kind": "bins",
                                                 "edges": BINS[c["name"]]}]}
        else:
            cols[c["name"]] = IDENTITY
    return {"bin_to_number": {"single": "value", "bounded": "midpoint", "open": "edge"},
            "columns": cols}


CRITERIA = [
    {"id": "one_way", "kind": "observed_marginal_error", "threshold": 0.06, "epsilon": 0.05,
     "bounds": [0, 1], "params": {"way": 1, "columns": None},
     "description": "1-way marginal shares over observed values"},
    {"id": "two_way", "kind": "observed_marginal_error", "threshold": 0.1, "epsilon": 0.05,
     "bounds": [0, 1], "params": {"way": 2,
                                  "columns": ["age", "workclass", "education", "occupation",
                                              "sex", "hours_per_week", "Y"]},
     "description": "2-way marginal shares over observed values, main columns"},
    {"id": "missing_rates", "kind": "missing_rate", "threshold": 0.015, "epsilon": 0.05,
     "bounds": [0, 1], "params": {"columns": MISSING_COLUMNS},
     "description": "each incomplete column's missing rate within 1.5 points"},
    {"id": "co_missing", "kind": "co_missingness", "threshold": 0.015, "epsilon": 0.05,
     "bounds": [0, 1], "params": {"columns": MISSING_COLUMNS},
     "description": "pairwise co-missingness within 1.5 points"},
    {"id": "tstr_y", "kind": "tstr", "threshold": 0.9, "epsilon": 0.05, "bounds": [0, 1],
     "params": {"target": "Y", "classifier": "logistic_regression", "metric": "accuracy",
                "seed": 0, "baseline": "majority"},
     "description": "train on the release, test on R: the error rate of Y relative to always "
                    "predicting R's majority class, (1 − accuracy)/(1 − majority share), below "
                    "0.9 (1 = learned nothing)"},
]


def document():
    criteria = CRITERIA
    return {
        "spec_version": "1.0",
        "metadata": {
            "title": "UCI Adult census extract with missing values",
            "owner": "Release Workbench examples (issue 16)",
            "description": "Adult (32,561 rows) with its natural missingness kept: workclass, "
                           "occupation and native_country are 'allow' columns; the generator "
                           "(PrivBayes) reads every marginal from the rows complete on its own "
                           "columns (partial, PrivBayesE) and fits a DP missingness pattern, so "
                           "the release keeps the missing rates. The network's structure is "
                           "learnt from the public half of the extract (structure: public, "
                           "out/adult/adult_raw_public_proxy.csv made by scripts/adult_data.py, "
                           "its SHA-256 pinned), so all of epsilon goes to the noisy marginals "
                           "(epsilon_gen 2, 15% of it on the missingness pattern; rows drawn "
                           "with rounded conditional counts). "
                           "Its TSTR criterion asks a "
                           "logistic regression trained on the release to beat always "
                           "predicting R's majority class (a release that learned nothing "
                           "about Y fails it); the criteria's epsilons and the recorded "
                           "forecast come from workbench design on the public half of the "
                           "extract at n = 5,000.",
            "dataset": "uci-adult-train",
        },
        "schema": {"expected_n": [5000, 16300],
                   "file_format": {"missing_markers": ["?"], "skip_initial_space": True},
                   "columns": COLUMNS},
        "transformations": transformations(),
        "constraints": {"raw": [], "synthetic": []},
        "criteria": criteria,
        "faithfulness": {"exact": [c["name"] for c in COLUMNS if c["name"] not in BINS],
                         "distance": {name: 1 for name in BINS}, "alpha": 1},
        "face_privacy": {"min_count": [1]},
        "generator": {"family": "privbayes", "search_space": [
            {"theta": [4.0], "missing_strategy": ["partial"], "missingness_share": [0.15],
             "sampling": ["rounded"], "structure": ["public"],
             "structure_proxy": [PROXY], "structure_proxy_sha256": [PROXY_SHA256]}]},
        "budget": {"epsilon_generator": 2.0,
                   "epsilon_criteria": round(sum(c["epsilon"] for c in criteria), 6),
                   "neighbour": "replace_one"},
        "selection": {"gamma": 0, "max_iterations": 1, "epsilon_0": 0},
    }


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "examples/adult_missing.json"
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(document(), fh, indent=2, ensure_ascii=False)
        fh.write("\n")
