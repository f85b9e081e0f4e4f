"""Cases of the padding, upsampling, group norm, dropout and scatter-family operators for
tools/interop/gen_ops.py (called from ops_nn_cases.add_all, written to ops_nn_cases.json). Their
own generator (seed 1213) leaves every older case unchanged; about a dozen cases per op."""
import random


def add_all(g):
    saved, g.rng = g.rng, random.Random(1213)
    T, I, D, B, NONE, INTS = g.T, g.I, g.D, g.B, g.NONE, g.INTS
    perm = g.perm_strides

    def add(name, op, args, **kw):
        dt = next((a["dtype"] for a in args if a.get("k") == "tensor"), "float32")
        g.add_case(name, op, args, tol=[1e-12, 1e-10] if dt == "float64" else [1e-6, 1e-5], **kw)

    cl = perm([2, 3, 4, 5], [0, 2, 3, 1])
    cl3 = perm([1, 2, 3, 4, 5], [0, 2, 3, 4, 1])
    # ---- constant_pad_nd
    for name, x, p, v in [("basic", T([2, 3, 4]), [1, 2], I(0)), ("2d", T([2, 3, 4, 5]), [1, 1, 2, 0], D(1.5)),
                          ("channels_last", T([2, 3, 4, 5], cl), [1, 1, 1, 1], I(0)),
                          ("negative", T([2, 3, 4]), [-1, 1], I(0)), ("crop_only", T([2, 3, 4]), [-1, 0, 0, -1], I(0)),
                          ("crop_transposed", T([3, 4], [1, 3]), [-1, 0], I(0)),
                          ("int_float_value", T([2, 3], dtype="int64"), [1, 1], D(2.5)),
                          ("bool", T([2, 3], dtype="bool"), [1, 0], B(True)),
                          ("transposed", T([3, 4, 5], perm([3, 4, 5], [0, 2, 1])), [1, 1], D(-1.0)),
                          ("all_dims", T([2, 3]), [1, 1, 1, 1], I(7)), ("zero", T([2, 3]), [0, 0], I(0)),
                          ("odd", T([2, 3]), [1, 1, 1], I(0)), ("too_long", T([2, 3]), [1] * 6, I(0)),
                          ("too_negative", T([2, 3, 4]), [-3, -2], I(0)), ("empty", T([0, 3]), [1, 1], I(0)),
                          ("value_overflow", T([2, 3], dtype="int32"), [1, 1], D(1e10))]:
        add(f"constant_pad_nd/{name}", "constant_pad_nd", [x, INTS(p), v])
    # ---- reflection / replication
    for op, k in [("reflection_pad1d", 1), ("reflection_pad2d", 2), ("reflection_pad3d", 3),
                  ("replication_pad1d", 1), ("replication_pad2d", 2), ("replication_pad3d", 3)]:
        batch = [2, 3] + [4, 5, 3][:k]
        p = [1, 2, 2, 1, 1, 0][:2 * k]
        add(f"{op}/batch", op, [T(batch), INTS(p)])
        add(f"{op}/single", op, [T(batch[1:], dtype="float64"), INTS(p)])
        add(f"{op}/negative", op, [T(batch), INTS([-1, 2, 1, -1, 0, 1][:2 * k])])
        add(f"{op}/int64", op, [T(batch[1:], dtype="int64"), INTS(p)])
        add(f"{op}/bool", op, [T(batch[1:], dtype="bool"), INTS(p)])
        add(f"{op}/bad_len", op, [T(batch), INTS([1, 1, 1, 1, 1, 1, 1, 1][:2 * k + 2])])
        add(f"{op}/bad_rank", op, [T([4] * (k + 3)), INTS(p)])
        add(f"{op}/low_rank", op, [T([4] * k), INTS(p)])
        add(f"{op}/empty_batch", op, [T([0] + batch[1:]), INTS(p)])
        add(f"{op}/empty_plane", op, [T([2, 0] + batch[2:]), INTS(p)])
        add(f"{op}/too_big", op, [T(batch), INTS([4] + p[1:])])
        add(f"{op}/too_small", op, [T(batch), INTS([-4, -3] * k)])
        add(f"{op}/transposed", op, [T(batch, perm(batch, list(range(len(batch)))[::-1])), INTS(p)])
    add("reflection_pad2d/channels_last", "reflection_pad2d", [T([2, 3, 4, 5], cl), INTS([1, 1, 2, 2])])
    add("replication_pad2d/channels_last", "replication_pad2d", [T([2, 3, 4, 5], cl), INTS([1, 3, 0, 2])])
    add("reflection_pad3d/channels_last", "reflection_pad3d", [T([1, 2, 3, 4, 5], cl3), INTS([1, 1, 2, 2, 1, 0])])
    add("replication_pad3d/channels_last", "replication_pad3d", [T([1, 2, 3, 4, 5], cl3), INTS([1, 4, 0, 2, 1, 0])])
    add("replication_pad2d/negative_dim", "replication_pad2d", [T([2, 2, 3]), INTS([-4, 0, 0, 0])])
    add("replication_pad2d/wide", "replication_pad2d", [T([1, 2, 3]), INTS([5, 6, 0, 4])])
    # ---- F.pad's composites
    for mode, p in [("constant", [1, 2]), ("reflect", [1, 2, 1, 0]), ("replicate", [2, 1, 0, 1, 1, 1]),
                    ("circular", [1, 2, 2, 0])]:
        add(f"pad/{mode}", "pad", [T([1, 2, 3, 4] if mode != "replicate" else [1, 2, 3, 4, 5]), INTS(p),
                                   {"k": "str", "v": mode}, NONE()])
    add("pad/constant_value", "pad", [T([2, 3]), INTS([1, 1]), {"k": "str", "v": "constant"}, D(2.0)])
    add("pad/reflect_value", "pad", [T([2, 3, 4]), INTS([1, 1]), {"k": "str", "v": "reflect"}, D(2.0)])
    add("pad/bad_mode", "pad", [T([2, 3, 4]), INTS([1, 1]), {"k": "str", "v": "wrap"}, NONE()])
    add("pad/reflect_4d_1pad", "pad", [T([1, 2, 3, 4]), INTS([1, 1]), {"k": "str", "v": "reflect"}, NONE()])
    add("pad/odd", "pad", [T([2, 3, 4]), INTS([1]), {"k": "str", "v": "reflect"}, NONE()])
    add("_pad_circular/negative", "_pad_circular", [T([1, 2, 5]), INTS([-1, 2])])
    add("_pad_circular/wrap_twice", "_pad_circular", [T([1, 2, 3]), INTS([4, 0])])
    add("_pad_circular/bad_len", "_pad_circular", [T([1, 2, 3]), INTS([1, 1, 1, 1])])
    add("_pad_enum/replicate", "_pad_enum", [T([2, 3, 4]), INTS([1, 1]), I(1), NONE()])
    upsample_cases(add, T, I, D, B, NONE, INTS, cl)
    for name, x, w, b, n, c, hw, gr in [("basic", T([2, 4, 3, 3]), T([4]), T([4]), 2, 4, 9, 2),
                                        ("no_affine", T([2, 6, 5]), NONE(), NONE(), 2, 6, 5, 3),
                                        ("weight_only", T([1, 4, 2, 2], dtype="float64"), T([4], dtype="float64"), NONE(), 1, 4, 4, 4),
                                        ("channels_last", T([2, 3, 4, 5], cl), T([3]), T([3]), 2, 3, 20, 1),
                                        ("rank2", T([3, 4]), T([4]), T([4]), 3, 4, 1, 2),
                                        ("indivisible", T([2, 4, 3]), NONE(), NONE(), 2, 4, 3, 3),

                                        ("int64", T([2, 4, 3], dtype="int64"), NONE(), NONE(), 2, 4, 3, 2)]:
        add(f"native_group_norm/{name}", "native_group_norm", [x, w, b, I(n), I(c), I(hw), I(gr), D(1e-5)])
    add("native_group_norm/bad_weight", "native_group_norm", [T([2, 4, 3]), T([3]), NONE(), I(2), I(4), I(3), I(2),
                                                              D(1e-5)], runs=("cpu",))
    # a parameter of another dtype (a bool weight was once read as double: fuzz_op_call)
    add("native_group_norm/bool_weight", "native_group_norm", [T([2, 4, 3]), T([4], dtype="bool"), NONE(), I(2), I(4),
                                                               I(3), I(2), D(1e-5)], runs=("cpu",))
    add("native_group_norm/double_bias", "native_group_norm", [T([2, 4, 3]), NONE(), T([4], dtype="float64"), I(2), I(4),
                                                               I(3), I(2), D(1e-5)], runs=("cpu",))
    for name, x, gr, w, b in [("basic", T([2, 4, 3, 3]), 2, T([4]), T([4])), ("none", T([2, 6, 5]), 3, NONE(), NONE()),
                              ("channels_last", T([2, 3, 4, 5], cl), 3, T([3]), T([3])),
                              ("transposed", T([2, 4, 3], [12, 1, 4]), 2, NONE(), NONE()),
                              ("zero_groups", T([2, 4, 3]), 0, NONE(), NONE()),
                              ("bad_bias", T([2, 4, 3]), 2, T([4]), T([3]))]:
        add(f"group_norm/{name}", "group_norm", [x, I(gr), w, b, D(1e-5), B(True)])
    # native_dropout: the masks are random (nondeterministic here; tests/tracer/test_train.c
    # compares them after seeding), eval and p == 0 / 1 are not
    for name, x, p, t in [("train", T([2, 3]), 0.5, B(True)), ("train_none", T([2, 3]), 0.2, NONE()),
                          ("transposed", T([3, 4], [1, 3]), 0.5, B(True)), ("int64", T([2, 3], dtype="int64"), 0.5, B(True))]:
        add(f"native_dropout/{name}", "native_dropout", [x, D(p), t], nondeterministic=True)
    for name, x, p, t in [("eval", T([2, 3]), 0.5, B(False)), ("eval_transposed", T([3, 4], [1, 3]), 0.5, B(False)),
                          ("eval_int64", T([2, 3], dtype="int64"), 0.5, B(False)), ("p1", T([2, 3]), 1.0, B(True)),
                          ("bad_p", T([2, 3]), 1.5, B(True)), ("empty", T([0, 3]), 0.5, B(True))]:
        add(f"native_dropout/{name}", "native_dropout", [x, D(p), t], runs=("cpu",))
    add("native_dropout/meta_eval", "native_dropout", [T([3, 4], [1, 3]), D(0.5), B(False)], runs=("meta",))
    add("native_dropout/meta_p1", "native_dropout", [T([2, 3]), D(1.0), B(True)], runs=("meta",))
    add("native_dropout/meta_int64", "native_dropout", [T([2, 3], dtype="int64"), D(0.5), NONE()], runs=("meta",))
    # select_scatter / slice_scatter: self's exact layout (offset included) with src written in
    for name, x, src, d, i in [("basic", T([3, 4]), T([4]), 0, 1), ("dim1", T([3, 4]), T([3]), 1, -1),
                               ("transposed", T([3, 4], [1, 3]), T([3]), 1, 2), ("offset", T([3, 4], [4, 1], offset=2), T([4]), 0, 0),
                               ("int64", T([2, 3], dtype="int64"), T([3], dtype="int64"), 0, 1),
                               ("src_dtype", T([2, 3]), T([3], dtype="float64"), 0, 0),
                               ("bad_size", T([3, 4]), T([3]), 0, 1), ("bad_index", T([3, 4]), T([4]), 0, 5)]:
        add(f"select_scatter/{name}", "select_scatter", [x, src, I(d), I(i)])
    for name, x, src, d, st, en, sp in [("basic", T([4, 3]), T([2, 3]), 0, I(1), I(3), 1),
                                        ("step", T([3, 6]), T([3, 3]), 1, I(0), NONE(), 2),
                                        ("defaults", T([2, 3]), T([2, 3]), 0, NONE(), NONE(), 1),
                                        ("transposed", T([4, 3], [1, 4]), T([4, 2]), 1, I(1), I(3), 1),
                                        ("expanded", T([3, 4], [0, 1]), T([1, 4]), 0, I(0), I(1), 1),
                                        ("bad_size", T([4, 3]), T([3, 3]), 0, I(1), I(3), 1)]:
        add(f"slice_scatter/{name}", "slice_scatter", [x, src, I(d), st, en, I(sp)])
    g.rng = saved


def upsample_cases(add, T, I, D, B, NONE, INTS, cl):
    for name, x, o, sh, sw in [("double", T([1, 2, 3, 4]), [6, 8], NONE(), NONE()),
                               ("same", T([1, 2, 3, 4]), [3, 4], NONE(), NONE()),
                               ("odd", T([2, 1, 3, 5]), [7, 4], NONE(), NONE()),
                               ("scales", T([1, 2, 3, 4]), [4, 6], D(1.5), D(1.5)),
                               ("scales_mismatch", T([1, 1, 4, 4]), [5, 7], D(1.3), D(2.0)),
                               ("float64", T([1, 2, 3, 3], dtype="float64"), [5, 5], NONE(), NONE()),
                               ("channels_last", T([2, 3, 4, 5], cl), [8, 7], NONE(), NONE()),
                               ("transposed", T([2, 3, 4, 5], [60, 1, 3, 12]), [5, 6], NONE(), NONE()),
                               ("int64", T([1, 2, 3, 4], dtype="int64"), [6, 8], NONE(), NONE()),
                               ("rank3", T([2, 3, 4]), [6, 8], NONE(), NONE()),
                               ("zero_out", T([1, 2, 3, 4]), [0, 8], NONE(), NONE()),
                               ("one_size", T([1, 2, 3, 4]), [6], NONE(), NONE()),
                               ("empty_batch", T([0, 2, 3, 4]), [6, 8], NONE(), NONE()),
                               ("empty_channels", T([1, 0, 3, 4]), [6, 8], NONE(), NONE())]:
        add(f"upsample_nearest2d/{name}", "upsample_nearest2d", [x, INTS(o), sh, sw])
        for ac in (False, True):
            # the meta run of a bad size is the Python decomposition failing by accident
            # (division by zero, tuple index): cpu only
            runs = ("cpu",) if name in ("rank3", "zero_out", "one_size") else ("cpu", "meta")
            add(f"upsample_bilinear2d/{name}/{'ac' if ac else 'hp'}", "upsample_bilinear2d", [x, INTS(o), B(ac), sh, sw],
                runs=runs)
    add("upsample_bilinear2d/down", "upsample_bilinear2d", [T([1, 2, 7, 9]), INTS([3, 4]), B(False), NONE(), NONE()])
    add("upsample_bilinear2d/down_ac", "upsample_bilinear2d", [T([1, 2, 7, 9]), INTS([3, 1]), B(True), NONE(), NONE()])
    add("upsample_nearest2d/down", "upsample_nearest2d", [T([1, 2, 7, 9]), INTS([3, 4]), NONE(), NONE()])
    # .vec: output_size or scale_factors (float[]), the .default call they make
    def F(v): return {"k": "floats", "v": list(v)}
    for name, x, o, sf in [("size", T([1, 2, 3, 4]), INTS([5, 7]), NONE()), ("scale", T([1, 2, 3, 4]), NONE(), F([2.0, 1.5])),
                           ("scale_trunc", T([1, 1, 3, 3]), NONE(), F([1.7, 2.3])),
                           ("channels_last", T([2, 3, 4, 5], cl), NONE(), F([2.0, 2.0])),
                           ("both", T([1, 2, 3, 4]), INTS([5, 7]), F([2.0, 2.0])), ("neither", T([1, 2, 3, 4]), NONE(), NONE()),
                           ("size_len", T([1, 2, 3, 4]), INTS([5]), NONE()), ("scale_len", T([1, 2, 3, 4]), NONE(), F([2.0])),
                           # a size past int64 (a NaN scale was once an undefined cast: fuzz_op_call)
                           ("scale_overflow", T([1, 1, 2, 2]), NONE(), F([1e30, 1.0]))]:
        add(f"upsample_nearest2d_vec/{name}", "upsample_nearest2d_vec", [x, o, sf])
        for ac in (False, True):
            add(f"upsample_bilinear2d_vec/{name}/{ac}", "upsample_bilinear2d_vec", [x, o, B(ac), sf])
