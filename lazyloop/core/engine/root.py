"""Values outside loops, forced in the reference's order without its driver.

The reference machine forces every element through its driver: a generator per element,
which yields what it needs and is resumed with it (`stream/order`). Outside loops, what a
map, a projection, an input or a constant needs is known before anything runs: its
arguments, left to right. So the engine forces a value outside loops by walking that static
cone once, depth first, in the order the driver would reach each node (`root_order`),
calling each map's kernel itself; an if-conditional's output forces its condition, then the
taken branch, by the same walk; a loop output or an undefined value is forced by the driver,
as the reference forces it, when the walk reaches it. The elements forced, their order and
their values are the reference's (`laziness/dead`, `stream/map`).

A value walked often (a lowered model evaluated again and again) is walked by one generated
Python function, written once per plan from its order (`walk_source`, as the compiled trips
are): each node's step in line, skipped when the node is forced already, its element stored
as `Machine.store` stores one outside loops -- marked read-only, checked against its
stream's type unless its dtype and shape are ones the type was found to admit
(`structure/shapes`). An element only kernels that say they only read ever read is left
unmarked by it (`unmarked_roots`), as a loop's schedule leaves one (`readonly.py`). A map
of constants alone (`folded`: exporters compute index arithmetic from constants) is made
by the first evaluation that needs it and then kept with the plan's constants.
"""
from __future__ import annotations

import numpy as np

from ..errors import LazyLoopError
from ..feeds import CheckedFeeds, input_table
from ..plan import Const, IfOutput, Input, Map, Project
from ..reference import rules
from ..reference.machine import admitted_shapes
from ..types import TensorType
from ..undefined import Partial
from .element_checks import sure_of_type
from .inline_steps import plain_passed
from .needed import may_read


def root_order(plan, nid) -> tuple:
    """The nodes outside loops that forcing `nid` forces through maps, projections and the
    conditions of if-conditionals (forced first, whichever branch is taken), in the order
    the reference's driver completes them (depth first, arguments left to right), `nid`
    last; a node of another kind is a leaf (an if-conditional's branches are forced when
    it is, the one taken only)."""
    done, order = set(), []
    stack = [(nid, False)]
    while stack:
        k, expanded = stack.pop()
        if k in done:
            continue
        node = plan.nodes[k]
        if expanded or not isinstance(node, (Map, Project, IfOutput)):
            done.add(k)
            order.append(k)
            continue
        stack.append((k, True))
        args = (node.args if isinstance(node, Map) else (node.call,) if isinstance(
            node, Project) else (node.cond,))
        stack.extend((a, False) for a in reversed(args) if a is not None and a not in done)
    return tuple(order)


def constants(plan) -> dict:
    """The constants outside loops whose value its stream's type admits, as the root memo
    holds them once forced ({id: {0: value}}, the value read-only); derived once per plan.
    An evaluation starts with them in its root memo: forcing one computes nothing and can
    fail on nothing, so every evaluation would store the same element (`stream/memo`). A
    constant its type refuses is left to be forced, and refused, when something reads it.
    The compiled walk adds the maps of constants alone to it once it has made them
    (`folded`). The inner dictionaries are shared by every evaluation of the plan and never
    written: each holds its one element already."""
    key = ("root constants",)
    found = plan.derived.get(key)
    if found is None:
        found = plan.derived[key] = {}
        relaxed = plan.profile != "tensorrt"
        for k, node in plan.nodes.items():
            if node.scope is None and isinstance(node, Const):
                value = node.value
                if value.__class__ is np.ndarray and (not relaxed or isinstance(
                        node.type, TensorType) and value.dtype == node.type.dtype
                        and node.type.admits(value.shape)):
                    value.setflags(write=False)
                    found[k] = {0: value}
    return found


def folded(plan) -> frozenset:
    """Maps outside loops whose every argument is a constant outside loops or such a map,
    with a pure kernel (`Kernel.pure`: its value depends on its arguments' values alone),
    and the projections of such maps: every evaluation of the plan would compute the same
    element for them (`stream/map`). The compiled walk adds the first it computes to the
    plan's `constants`, read-only, so later evaluations start with it in their root memo as
    with a constant; one its kernel refuses is not kept, and is refused again. Derived once
    per plan."""
    key = ("root folded",)
    found = plan.derived.get(key)
    if found is None:
        found, grew = set(), True
        while grew:
            grew = False
            for k, node in plan.nodes.items():
                if k in found or node.scope is not None:
                    continue
                if isinstance(node, Map):
                    fixed = node.kernel.pure and all(
                        a is None or a in found or isinstance(plan.nodes[a], Const)
                        for a in node.args)
                else:
                    fixed = isinstance(node, Project) and node.call in found
                if fixed:
                    found.add(k)
                    grew = True
        found = plan.derived[key] = frozenset(found)
    return found


def store_inputs(machine):
    """The root memo given the evaluation's inputs, each as the walk stores one (`walk`):
    feeds `check_feeds` answered (`CheckedFeeds`) are taken as they are, the tensor inputs
    the machine listed once per plan (`tensor_inputs`); of other feeds, arrays of their
    input's dtype and of a shape its type admits, read-only; an input fed otherwise is left
    to the walk, which checks and stores it when something reads it."""
    memo, feeds = machine.root.memo, machine.feeds
    if feeds.__class__ is CheckedFeeds:
        for k in machine.tensor_inputs:
            memo[k] = {0: feeds[k]}
        return
    plan = machine.plan
    relaxed = plan.profile != "tensorrt"
    for k, _, dtype, shapes in input_table(plan):
        value = feeds.get(k)
        if value.__class__ is np.ndarray and (not relaxed or dtype is not None and
                                              value.dtype == dtype and value.shape in shapes):
            value.setflags(write=False)
            memo[k] = {0: value}


def unmarked_roots(plan) -> frozenset:
    """`stream/memo` outside loops: the nodes whose elements reach no reader that might
    write, or keep, them -- read only by kernels that say they only read (`Kernel.reads_only`)
    and by if-conditionals (which read a condition's first element) -- need not be made
    read-only when the compiled walk stores them, as `readonly.py` leaves such streams of a
    loop unmarked (an output is copied when returned). An element also reaches the readers
    of a node whose element may be it, itself: a kernel that may return its argument
    (`Kernel.passes_input`: Identity, Where), an if-conditional (its taken branch's). A
    reader in a loop, a loop output, a projection or a node of another kind might write.
    Derived once per plan."""
    key = ("unmarked roots",)
    found = plan.derived.get(key)
    if found is None:
        found = plan.derived[key] = frozenset(
            k for k, node in plan.nodes.items()
            if node.scope is None and k not in marked_roots(plan))
    return found


def marked_roots(plan) -> set:
    """The nodes whose elements reach a reader that might write or keep them
    (`unmarked_roots`): what such readers read, and what reaches a marked node's element
    as that element itself."""
    marked, carried = set(), []  # carried: (a node, a reader whose element may be its)
    for k, node in plan.nodes.items():
        if node.scope is None and isinstance(node, Map) and node.kernel.reads_only:
            if node.kernel.passes_input:
                carried.extend((a, k) for a in node.args if a is not None)
        elif node.scope is None and isinstance(node, IfOutput):
            carried.extend((a, k) for a in (node.then, node.orelse) if a is not None)
        else:
            marked.update(may_read(plan, node))
    grew = True
    while grew:  # what reaches a marked node's element as that element is marked too
        grew = False
        for a, k in carried:
            if k in marked and a not in marked:
                marked.add(a)
                grew = True
    return marked


def sure_roots(plan) -> frozenset:
    """`structure/shapes` outside loops: the maps whose every array element passes the check
    because their arguments' elements did (`sure_of_type`: the type their kernel gives for
    their arguments' types is contained in theirs) -- every element outside loops was
    checked when stored, or was sure. The compiled walk stores an array they give without
    the check, as compiled trips do (element_checks.py); anything else they give (an
    undefined element, a numpy scalar) is stored by `Machine.store`, which checks it.
    Derived once per plan."""
    key = ("sure roots",)
    found = plan.derived.get(key)
    if found is None:
        nodes = plan.nodes
        found = plan.derived[key] = frozenset(
            k for k, node in nodes.items() if node.scope is None and isinstance(node, Map)
            and sure_of_type(nodes, node))
    return found


HOT_WALKS = 8  # a value's walk is compiled once it has been walked this many times


def root_walks(plan) -> dict:
    """{node outside loops: how often it was walked node by node, or its compiled walk},
    kept with the plan (`force_root`)."""
    return plan.derived.setdefault(("root walks",), {})


def force_root(machine, nid):
    """Element 0 of `nid`, a node outside loops, and what it needs, as the reference forces
    them: by its compiled walk once the plan has walked it `HOT_WALKS` times (compiling
    costs what a few dozen walks do), else node by node (`walk`)."""
    memo = machine.root.memo
    done = memo.get(nid)
    if done is not None:
        return done[0]
    walks = machine.walks  # the plan's `root_walks`
    walked = walks.get(nid, 0)
    if walked.__class__ is int:
        plan = machine.plan
        walks[nid] = walked + 1 if walked + 1 < HOT_WALKS else compile_walk(plan, nid)
        walk(machine, root_order(plan, nid))
    else:
        walked(memo, machine)
    return memo[nid][0]


def walk(machine, order):
    """The walk of `order` node by node: what the compiled walk does, each step by its
    node's kind."""
    memo, nodes = machine.root.memo, machine.plan.nodes
    for k in order:
        if k in memo:
            continue
        node = nodes[k]
        if isinstance(node, Map):
            args = [None if a is None else memo[a][0] for a in node.args]
            try:
                value = (rules.map_element(node, args) if any(
                    a.__class__ is Partial for a in args) else node.fn(*args))
            except LazyLoopError:
                raise
            except Exception as exc:  # as MapStep.force names it (`stream/map`)
                raise rules.kernel_refused(node, 0, exc) from None
        elif isinstance(node, Project):
            value = memo[node.call][0][node.k]
        elif isinstance(node, Input):
            value = machine.feeds[k]
        elif isinstance(node, Const):
            value = node.value
        elif isinstance(node, IfOutput):  # the condition, then the taken branch only
            value = rules.if_element(node, force_root(machine, node.cond),
                                     lambda ref: force_root(machine, ref))
        else:  # a loop output, an undefined value: the driver forces it
            machine.demand_by_driver(k)
            continue
        machine.store(k, machine.root, 0, value)


INLINE_BRANCHES = 2  # how deep if-conditionals' taken branches are walked in line
INLINE_NODES = 24  # how many nodes of such branches one walk writes in line, at most


class Walk:
    """Writes the source of one value's walk (`walk_source`): the nodes of its order, each
    numbered (`keys`), and in an if-conditional's code the walk of the taken branch, in
    line down to `INLINE_BRANCHES` nested if-conditionals and `INLINE_NODES` nodes in all
    (a walk's text, and the time compiling it takes, stay in proportion to its order)."""

    def __init__(self, plan, order):
        self.plan, self.order = plan, order
        self.keys, self.ids = [], {}  # every node written, by number; node -> its number
        self.walked = set()  # the nodes of `order` written so far: in the memo from then on
        self.lines = []
        self.indent = 0  # the depth of the branch being written in line
        self.inlined = 0  # how many if-conditionals' branches enclose it
        self.budget = INLINE_NODES  # how many more nodes branches may write in line
        self.unmarked = unmarked_roots(plan)
        self.folded = folded(plan)
        self.sure = sure_roots(plan)

    def emit(self, depth, text):
        self.lines.append("    " * (depth + self.indent) + text)

    def number(self, k) -> int:
        c = self.ids[k] = len(self.keys)
        self.keys.append(k)
        return c

    def node(self, k, c):
        """Node k (number c): its element into v, then stored."""
        node = self.plan.nodes[k]
        self.emit(1, f"if k{c} not in M:  # {k!r}")
        if isinstance(node, Map):
            self.map_node(node, c)
            return
        if isinstance(node, Project):
            self.emit(2, f"v = M[{self.key(node.call)}][0][{node.k}]")
        elif isinstance(node, Input):
            self.emit(2, f"v = MACHINE.feeds[k{c}]")
        elif isinstance(node, Const):
            self.emit(2, f"v = N[{c}].value")
        elif isinstance(node, IfOutput):
            self.if_output(node, c)
        else:  # a loop output, an undefined value: the driver forces it
            self.emit(2, f"MACHINE.demand_by_driver(k{c})")
            return
        self.store(node, c)

    def map_node(self, node, c):
        """A map's element: by `map_element` where an argument is undefined; its first
        argument itself where its kernel says it returns that plain array as it is
        (`plain_passed`: Identity, a Cast or CastLike to the dtype it has), without a call;
        else the kernel's call, a refusal naming the node (`stream/map`). Then stored."""
        names = [f"a{p}" for p in range(len(node.args))]
        for name, a in zip(names, node.args):
            self.emit(2, f"{name} = None" if a is None else f"{name} = M[{self.key(a)}][0]")
        partial = " or ".join(f"{n}.__class__ is P" for n, a in zip(names, node.args)
                              if a is not None) or "False"
        passed = plain_passed(node, c, *names[:2]) if names else None  # (`a`, `b`)
        if passed is not None and f"d{c}" in passed:
            self.emit(2, f"d{c} = D[{c}]")
        self.emit(2, f"if {partial}:")
        self.emit(3, f"v = MAPPED(N[{c}], [{', '.join(names)}])")
        if passed is not None:
            self.emit(2, f"elif {passed}:")
            self.emit(3, "v = a0")
        self.emit(2, "else:")
        self.emit(3, "try:")
        self.emit(4, f"v = F[{c}]({', '.join(names)})")
        self.emit(3, "except LLE:")
        self.emit(4, "raise")
        self.emit(3, "except Exception as exc:  # as MapStep.force names it (stream/map)")
        self.emit(4, f"raise REFUSED(N[{c}], 0, exc) from None")
        may_pass = node.kernel.passes_input or not node.kernel.reads_only
        self.store(node, c, [n for n, a in zip(names, node.args)
                             if may_pass and a is not None and a not in self.unmarked])

    def if_output(self, node, c):
        """`if_element`: the condition (forced just before, `root_order`), then the taken
        branch only (`laziness/dead`); a condition that is a plain array (defined) picks
        the branch in line, as `condition_of` reads it (its first element), and the
        branch's walk is written in line (`branch`); any other is left to the rule."""
        self.emit(2, f"w = M[{self.key(node.cond)}][0]")
        self.emit(2, "if w.__class__ is ND:")
        then, orelse = self.cone(node.then), self.cone(node.orelse)
        if self.inlined < INLINE_BRANCHES and len(then) + len(orelse) <= self.budget:
            self.budget -= len(then) + len(orelse)
            self.emit(3, "if w.reshape(-1)[0]:")
            self.branch(node.then, then, 4)
            self.emit(3, "else:")
            self.branch(node.orelse, orelse, 4)
        else:
            self.emit(3, f"w = {self.key(node.then)} if w.reshape(-1)[0] else "
                         f"{self.key(node.orelse)}")
            self.emit(3, "v = M.get(w)")
            self.emit(3, "v = ROOT(MACHINE, w) if v is None else v[0]")
        self.emit(2, "else:")
        self.emit(3, f"v = IF(N[{c}], w, lambda ref: ROOT(MACHINE, ref))")

    def cone(self, ref) -> list:
        """The branch `ref`'s walk (`root_order`) without what the value's own walk has
        made by then."""
        return [k for k in root_order(self.plan, ref) if k not in self.walked]

    def branch(self, ref, cone, depth):
        """v = element 0 of the branch `ref`, its walk `cone` written in line at `depth`."""
        saved = self.indent
        self.indent, self.inlined = saved + depth - 1, self.inlined + 1
        for k in cone:
            self.node(k, self.number(k))
        self.indent, self.inlined = saved, self.inlined - 1
        self.emit(depth, f"v = M[{self.key(ref)}][0]")

    def key(self, ref):
        return f"k{self.ids[ref]}" if ref in self.ids else repr(ref)  # a node id: a str

    def store(self, node, c, marked_args=()):
        """`Machine.store` outside loops, without a trace, the usual case in line. A value
        that is one of `marked_args` itself (a kernel that `passes_input`) is read-only
        already: the memo holds it so (`stream/memo`), and it is not marked again."""
        ty = node.type
        if not isinstance(ty, TensorType):
            self.emit(2, f"MACHINE.store(k{c}, ROOT_ACT, 0, v)")
            return
        if node.id in self.sure:  # what its arguments' types give it: an array passes
            self.emit(2, "if v.__class__ is ND:")
        else:
            self.emit(2, f"if v.__class__ is ND and v.dtype == D[{c}] and v.shape in S[{c}]:")
        if node.id not in self.unmarked or node.id in self.folded:
            if marked_args:
                self.emit(3, f"if {' and '.join(f'v is not {n}' for n in marked_args)}:")
                self.emit(4, "v.setflags(write=False)")
            else:
                self.emit(3, "v.setflags(write=False)")
        self.emit(3, f"M[k{c}] = {{0: v}}")
        if node.id in self.folded:  # every evaluation would make it: kept with the plan
            self.emit(3, f"FOLDED[k{c}] = {{0: v}}")
        self.emit(2, "else:")
        self.emit(3, f"MACHINE.store(k{c}, ROOT_ACT, 0, v)")

    def source(self) -> str:
        for k in self.order:
            self.node(k, self.number(k))
            self.walked.add(k)
        body, self.lines = self.lines, []
        self.emit(0, "def bind(K, N, F, D, S):")
        if self.keys:
            self.emit(1, f"[{', '.join(f'k{c}' for c in range(len(self.keys)))},] = K")
        self.emit(1, "def walk(M, MACHINE):")
        self.emit(2, "ROOT_ACT = MACHINE.root")
        self.lines.extend("    " + line for line in body)
        self.emit(1, "return walk")
        return "\n".join(self.lines) + "\n"


def walk_source(plan, nid) -> str:
    """The generated walk of `nid`, as text."""
    return Walk(plan, root_order(plan, nid)).source()


def compile_walk(plan, nid):
    """The walk of `nid` as a function walk(root memo, machine), compiled once per plan."""
    writer = Walk(plan, root_order(plan, nid))
    text = writer.source()
    order = writer.keys
    scope = {"P": Partial, "ND": np.ndarray, "LLE": LazyLoopError, "MAPPED": rules.map_element,
             "REFUSED": rules.kernel_refused, "IF": rules.if_element, "ROOT": force_root,
             "FOLDED": constants(plan)}
    exec(compile(text, f"<walk of {nid}>", "exec"), scope)  # noqa: S102
    nodes = [plan.nodes[k] for k in order]
    relaxed = plan.profile != "tensorrt"
    return scope["bind"](
        list(order), nodes, [getattr(n, "fn", None) for n in nodes],
        [getattr(n.type, "dtype", None) for n in nodes],
        [(admitted_shapes(plan, k) if relaxed else AnyShape()) if isinstance(
            n.type, TensorType) else None for k, n in zip(order, nodes)])


class AnyShape:
    """Under the TensorRT profile every element is checked when its layer is built: any
    shape passes here (`Machine.store` checks nothing either)."""

    def __contains__(self, shape):
        return True
