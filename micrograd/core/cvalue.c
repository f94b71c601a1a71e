/* The compiled core of micrograd's engine: `Node`, the storage `Value` (engine.py) is built on,
 * with `+ - *` of Values and numbers and `backward()` in C. Optional: core/compiled.py falls back
 * to a pure-Python Node where this does not build, or with MICROGRAD_PURE_PYTHON=1.
 *
 * Why. A graph of Values holds no reference cycles: reference counting frees it. So a node is
 * not tracked by the cyclic garbage collector (its young collections, then full ones, walked
 * every node of a training step's graph) until it gets a __dict__ of its own (p.m = p may make a
 * cycle): then it is tracked, and such cycles are freed. Memory: data, grad, up to two children
 * and their local derivatives sit in the node itself (no tuples, no float objects), and a freed
 * graph's nodes are kept for the next graph (the pool, below). A dot node's tuples of children
 * and local derivatives, made here and held by the node alone, are untracked with it (tracked
 * again if the node is). So importing micrograd leaves the collector's thresholds as they were:
 * the pure engine's policy (core/collector.py) is not needed here (benchmarks/bench_engine.py).
 *
 * Equal to engine.py: each op here computes what its declared rule computes, bit for bit (the
 * forward a + b, a * b; the local derivatives (1, 1), (b, a)); anything else (a NaN or an
 * overflow, an odd operand, jit's watching) goes to the Python method, which raises the op's own
 * errors. backward() walks the graph as core/walk.py's topological_order and applies engine.py's
 * loop, `child.grad += local * v.grad`, in the same order (tests/test_compiled.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    double data, grad;
    PyObject *c[2]; /* children, inline (n >= 0); or c[0] is _prev, any object (n < 0) */
    union {
        double l[2];   /* the children's local derivatives, inline (lk) */
        PyObject *obj; /* or _local, any object (!lk); NULL: () */
    } u;
    PyObject *op, *label, *visit, *dict;
    PyObject *odd; /* NULL, or a list [data, grad]: numbers that are not floats (None: the double) */
    signed char n, lk;
} Node;

static PyTypeObject NodeType;
static PyTypeObject *V = NULL;   /* engine.Value, set by setup() */
static PyObject *slow = NULL;    /* the Python methods, by name, for what C leaves to them */
static int watched = 0;          /* jit is watching reads: every op and backward go to Python */
static PyObject *s_relu, *s_dot, *s_add, *s_mul, *s_empty, *s_grad, *s_backward, *e_tuple;

#define IS_NODE(o) PyObject_TypeCheck((o), &NodeType)
#define PLAIN(o) (Py_TYPE(o) == V && ((Node *)(o))->odd == NULL)

/* Freed nodes kept for the next graph. Why: a training step (or a benchmark's repeat) frees its
 * graph and builds the next one as large; freed, a big graph's memory goes back to the system
 * (pymalloc returns its emptied arenas), and building the next one faults every page of it in
 * again: kernel time, 0.1 us a node at a million nodes, more than the build itself
 * (benchmarks/RESULTS.md). So up to POOL_MAX freed nodes of `V` wait here, in `pool`,
 * and the next nodes made are these. POOL_MAX bounds what is kept once no graph is alive; a node
 * taken from here is not counted as an allocation by the cyclic collector, so the bound also
 * bounds how much later a young collection comes (the cycles through Values it frees).
 * release() (micrograd.engine.release_memory()) gives the pool's memory back. */
#define POOL_MAX (1 << 20)
static Node **pool = NULL; /* pool[0 .. pooled): the freed nodes kept */
static Py_ssize_t pooled = 0, pool_cap = 0;

/* A node's memory on its way into the cache, some nodes ahead of its turn: a big graph is not in
 * the cache, and the hardware's prefetcher stops at each page's end */
#define AHEAD 8
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) (__builtin_prefetch((p), 1), __builtin_prefetch((char *)(p) + 64, 1))
#else
#define PREFETCH(p) ((void)(p))
#endif

static Node *alloc(void) { /* a new, zeroed, untracked node of `V` (engine.Value) */
    if (pooled > 0) {
        Node *n = pool[--pooled];
        if (pooled >= AHEAD) PREFETCH(pool[pooled - AHEAD]);
        memset((char *)n + sizeof(PyObject), 0, sizeof(Node) - sizeof(PyObject));
        return (Node *)PyObject_Init((PyObject *)n, V);
    }
    Node *n = (Node *)V->tp_alloc(V, 0);
    if (n != NULL) PyObject_GC_UnTrack(n); /* see the file's comment */
    return n;
}

static int keep_node(Node *n) { /* into the pool if there is room (or room can be made): 1 */
    if (pooled == pool_cap) {
        Py_ssize_t cap = pool_cap ? 2 * pool_cap : 1024;
        Node **a = cap <= POOL_MAX ? PyMem_Realloc(pool, (size_t)cap * sizeof(Node *)) : NULL;
        if (a == NULL) return 0;
        pool = a;
        pool_cap = cap;
    }
    pool[pooled++] = n;
    return 1;
}

static void drain(void) { /* the pool's memory back to Python's allocator */
    while (pooled > 0) PyObject_GC_Del(pool[--pooled]);
    PyMem_Free(pool);
    pool = NULL;
    pool_cap = 0;
}

static PyObject *node_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    if (type == V) return (PyObject *)alloc();
    Node *self = (Node *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    if (type == &NodeType) PyObject_GC_UnTrack(self); /* see the file's comment */
    return (PyObject *)self;
}

static void track_if_dict(Node *self) { /* (and the node's own tuples, untracked by dot) */
    if (self->dict != NULL && !PyObject_GC_IsTracked((PyObject *)self)) {
        PyObject_GC_Track((PyObject *)self);
        PyObject *own[2] = {self->n < 0 ? self->c[0] : NULL, self->lk ? NULL : self->u.obj};
        for (int i = 0; i < 2; i++)
            if (own[i] && PyTuple_CheckExact(own[i]) && !PyObject_GC_IsTracked(own[i]))
                PyObject_GC_Track(own[i]);
    }
}

static int node_traverse(Node *self, visitproc visit, void *arg) {
    Py_VISIT(self->c[0]);
    Py_VISIT(self->c[1]);
    if (!self->lk) Py_VISIT(self->u.obj);
    Py_VISIT(self->op);
    Py_VISIT(self->label);
    Py_VISIT(self->visit);
    Py_VISIT(self->dict);
    Py_VISIT(self->odd);
    return 0;
}

static int node_clear(Node *self) {
    Py_CLEAR(self->c[0]);
    Py_CLEAR(self->c[1]);
    self->n = 0;
    if (self->lk) {
        self->lk = 0;
        self->u.obj = NULL;
    } else {
        Py_CLEAR(self->u.obj);
    }
    Py_CLEAR(self->op);
    Py_CLEAR(self->label);
    Py_CLEAR(self->visit);
    Py_CLEAR(self->dict);
    Py_CLEAR(self->odd);
    return 0;
}

static void node_dealloc(Node *self) {
    PyObject_GC_UnTrack(self);
    Py_TRASHCAN_BEGIN(self, node_dealloc) /* a 1e6-deep graph: no C recursion */
    node_clear(self);
    if (Py_TYPE(self) != V || !keep_node(self)) /* kept for the next graph (see alloc) */
        Py_TYPE(self)->tp_free((PyObject *)self);
    Py_TRASHCAN_END
}

static int node_setattro(PyObject *self, PyObject *name, PyObject *value) {
    int r = PyObject_GenericSetAttr(self, name, value);
    track_if_dict((Node *)self);
    return r;
}

/* ------------------------------------------------------------------ the lecture's fields */

static PyObject *odd_get(Node *self, int i) {
    PyObject *o = self->odd ? PyList_GET_ITEM(self->odd, i) : Py_None;
    if (o != Py_None) return Py_NewRef(o);
    return PyFloat_FromDouble(i == 0 ? self->data : self->grad);
}

static int odd_set(Node *self, int i, PyObject *value) {
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "can't delete a Value's data or grad");
        return -1;
    }
    if (PyFloat_CheckExact(value)) {
        double x = PyFloat_AS_DOUBLE(value);
        if (i == 0) self->data = x; else self->grad = x;
        if (self->odd) {
            PyList_SetItem(self->odd, i, Py_NewRef(Py_None));
            if (PyList_GET_ITEM(self->odd, 1 - i) == Py_None) Py_CLEAR(self->odd);
        }
        return 0;
    }
    if (self->odd == NULL) {
        self->odd = PyList_New(2);
        if (self->odd == NULL) return -1;
        PyList_SET_ITEM(self->odd, 0, Py_NewRef(Py_None));
        PyList_SET_ITEM(self->odd, 1, Py_NewRef(Py_None));
    }
    PyList_SetItem(self->odd, i, Py_NewRef(value));
    return 0;
}

static PyObject *data_get(Node *self, void *c) { return odd_get(self, 0); }
static int data_set(Node *self, PyObject *v, void *c) { return odd_set(self, 0, v); }
static PyObject *grad_get(Node *self, void *c) { return odd_get(self, 1); }
static int grad_set(Node *self, PyObject *v, void *c) { return odd_set(self, 1, v); }

static PyObject *obj_or(PyObject *o, PyObject *dflt) { return Py_NewRef(o ? o : dflt); }

static int obj_set(PyObject **slot, PyObject *value) {
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "can't delete a Value's field");
        return -1;
    }
    Py_XSETREF(*slot, Py_NewRef(value));
    return 0;
}

static PyObject *op_get(Node *self, void *c) { return obj_or(self->op, s_empty); }
static int op_set(Node *self, PyObject *v, void *c) { return obj_set(&self->op, v); }
static PyObject *label_get(Node *self, void *c) { return obj_or(self->label, s_empty); }
static int label_set(Node *self, PyObject *v, void *c) { return obj_set(&self->label, v); }
static PyObject *visit_get(Node *self, void *c) { return obj_or(self->visit, Py_None); }
static int visit_set(Node *self, PyObject *v, void *c) { return obj_set(&self->visit, v); }

static PyObject *prev_get(Node *self, void *c) {
    if (self->n < 0) return Py_NewRef(self->c[0]);
    PyObject *t = PyTuple_New(self->n);
    if (t == NULL) return NULL;
    for (int i = 0; i < self->n; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(self->c[i]));
    return t;
}

static PyObject *inline_locals(Node *self) {
    PyObject *t = PyTuple_New(self->n);
    if (t == NULL) return NULL;
    for (int i = 0; i < self->n; i++) {
        PyObject *x = PyFloat_FromDouble(self->u.l[i]);
        if (x == NULL) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *local_get(Node *self, void *c) {
    if (self->lk) return inline_locals(self);
    return obj_or(self->u.obj, e_tuple);
}

static int prev_set(Node *self, PyObject *value, void *c) {
    if (value == NULL) return obj_set(&self->c[0], NULL);
    if (self->lk) { /* the locals leave the node first: they belonged to the old children */
        PyObject *t = inline_locals(self);
        if (t == NULL) return -1;
        self->lk = 0;
        self->u.obj = t;
    }
    Py_ssize_t k = PyTuple_CheckExact(value) ? PyTuple_GET_SIZE(value) : -1;
    int fits = 0 <= k && k <= 2;
    for (Py_ssize_t i = 0; fits && i < k; i++) fits = IS_NODE(PyTuple_GET_ITEM(value, i));
    PyObject *old0 = self->c[0], *old1 = self->c[1];
    self->c[0] = self->c[1] = NULL;
    if (fits) {
        for (Py_ssize_t i = 0; i < k; i++) self->c[i] = Py_NewRef(PyTuple_GET_ITEM(value, i));
        self->n = (signed char)k;
    } else {
        self->n = -1;
        self->c[0] = Py_NewRef(value);
    }
    Py_XDECREF(old0);
    Py_XDECREF(old1);
    return 0;
}

static int local_set(Node *self, PyObject *value, void *c) {
    if (value == NULL) return obj_set(&self->u.obj, NULL);
    if (self->n > 0 && PyTuple_CheckExact(value) && PyTuple_GET_SIZE(value) == self->n) {
        int floats = 1;
        for (int i = 0; i < self->n; i++) floats &= PyFloat_CheckExact(PyTuple_GET_ITEM(value, i));
        if (floats) {
            if (!self->lk) Py_CLEAR(self->u.obj);
            for (int i = 0; i < self->n; i++)
                self->u.l[i] = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(value, i));
            self->lk = 1;
            return 0;
        }
    }
    if (self->lk) {
        self->lk = 0;
        self->u.obj = NULL;
    }
    return obj_set(&self->u.obj, value);
}

static PyObject *dict_get(PyObject *self, void *c) {
    PyObject *d = PyObject_GenericGetDict(self, c);
    track_if_dict((Node *)self);
    return d;
}

static int dict_set(PyObject *self, PyObject *v, void *c) {
    int r = PyObject_GenericSetDict(self, v, c);
    track_if_dict((Node *)self);
    return r;
}

static PyGetSetDef node_getset[] = {
    {"data", (getter)data_get, (setter)data_set, "the node's number", NULL},
    {"grad", (getter)grad_get, (setter)grad_set, "d(output)/d(this node)", NULL},
    {"label", (getter)label_get, (setter)label_set, NULL, NULL},
    {"_prev", (getter)prev_get, (setter)prev_set, "the children", NULL},
    {"_op", (getter)op_get, (setter)op_set, NULL, NULL},
    {"_local", (getter)local_get, (setter)local_set, "d self / d child, one per child", NULL},
    {"_visit", (getter)visit_get, (setter)visit_set, NULL, NULL},
    {"__dict__", dict_get, dict_set, NULL, NULL},
    {NULL},
};

/* ---------------------------------------------------------------------------- the ops */

static PyObject *leaf(double x) { /* Value(x): a constant, as engine.py's _lift makes */
    Node *n = alloc();
    if (n != NULL) n->data = x;
    return (PyObject *)n;
}

static PyObject *node2(PyObject *a, PyObject *b, double out, PyObject *op, double la, double lb) {
    Node *n = alloc();
    if (n == NULL) return NULL;
    n->data = out;
    n->c[0] = Py_NewRef(a);
    n->c[1] = Py_NewRef(b);
    n->u.l[0] = la;
    n->u.l[1] = lb;
    n->n = 2;
    n->lk = 1;
    n->op = Py_NewRef(op);
    return (PyObject *)n;
}

/* a plain number operand as a float (exact float, or an int a float holds): 1; else 0 */
static int number(PyObject *o, double *x) {
    if (PyFloat_CheckExact(o)) { *x = PyFloat_AS_DOUBLE(o); return 1; }
    if (PyLong_CheckExact(o)) {
        *x = PyLong_AsDouble(o);
        if (*x == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
        return 1;
    }
    return 0;
}

static PyObject *call_slow(const char *name, PyObject *a, PyObject *b) {
    PyObject *fn = PyDict_GetItemString(slow, name);
    if (fn == NULL) return PyErr_Format(PyExc_RuntimeError, "micrograd: no method %s", name);
    return b ? PyObject_CallFunctionObjArgs(fn, a, b, NULL) : PyObject_CallFunctionObjArgs(fn, a, NULL);
}

/* a op b for two Values (kind 0: +, 1: *); NULL without an error: not finite, use Python */
static PyObject *binop(int kind, PyObject *a, PyObject *b) {
    double x = ((Node *)a)->data, y = ((Node *)b)->data;
    double out = kind ? x * y : x + y;
    if (!isfinite(out)) return NULL;
    return kind ? node2(a, b, out, s_mul, y, x) : node2(a, b, out, s_add, 1.0, 1.0);
}

/* `a op b` (kind 0: +, 1: *) where a is a Value or a number; NULL without error: use Python */
static PyObject *lifted(int kind, PyObject *a, PyObject *b) {
    double x;
    PyObject *la = NULL, *lb = NULL, *r;
    if (!PLAIN(a)) {
        if (!number(a, &x) || !PLAIN(b)) return NULL;
        a = la = leaf(x);
        if (la == NULL) return NULL;
    } else if (!PLAIN(b)) {
        if (!number(b, &x)) return NULL;
        b = lb = leaf(x);
        if (lb == NULL) return NULL;
    }
    r = binop(kind, a, b);
    Py_XDECREF(la);
    Py_XDECREF(lb);
    return r;
}

static PyObject *dispatch(int kind, PyObject *a, PyObject *b) {
    PyObject *r = watched ? NULL : lifted(kind, a, b);
    if (r != NULL || PyErr_Occurred()) return r;
    const char *names[2][2] = {{"__add__", "__radd__"}, {"__mul__", "__rmul__"}};
    if (IS_NODE(a) && PyObject_TypeCheck(a, V)) return call_slow(names[kind][0], a, b);
    return call_slow(names[kind][1], b, a);
}

static PyObject *nb_add(PyObject *a, PyObject *b) { return dispatch(0, a, b); }
static PyObject *nb_mul(PyObject *a, PyObject *b) { return dispatch(1, a, b); }

static PyObject *negated(PyObject *a) { /* a * -1, as engine.py's __neg__: a Value, a leaf -1.0 */
    PyObject *m = leaf(-1.0), *r;
    if (m == NULL) return NULL;
    r = binop(1, a, m);
    Py_DECREF(m);
    return r;
}

static PyObject *nb_neg(PyObject *a) {
    PyObject *r = watched || !PLAIN(a) ? NULL : negated(a);
    return r != NULL || PyErr_Occurred() ? r : call_slow("__neg__", a, NULL);
}

static PyObject *nb_sub_entry(PyObject *a, PyObject *b) {
    PyObject *r = NULL, *x = NULL;
    double d;
    if (!watched) {
        PyObject *A = a, *B = b;
        if (PLAIN(A) && !PLAIN(B) && number(B, &d)) B = x = leaf(d);
        else if (!PLAIN(A) && PLAIN(B) && number(A, &d)) A = x = leaf(d);
        if (PLAIN(A) && PLAIN(B)) {
            PyObject *neg = negated(B);
            if (neg != NULL) {
                r = binop(0, A, neg);
                Py_DECREF(neg);
            }
        }
        Py_XDECREF(x);
        if (r != NULL || PyErr_Occurred()) return r;
    }
    if (IS_NODE(a) && PyObject_TypeCheck(a, V)) return call_slow("__sub__", a, b);
    return call_slow("__rsub__", b, a);
}

static PyObject *relu(PyObject *self, PyObject *unused) { /* the ReLU rule: max(a, 0), a > 0 */
    double a = ((Node *)self)->data;
    if (watched || !PLAIN(self) || !isfinite(a)) return call_slow("relu", self, NULL);
    Node *n = alloc();
    if (n == NULL) return NULL;
    n->data = a > 0.0 ? a : 0.0;
    n->c[0] = Py_NewRef(self);
    n->n = 1;
    n->u.l[0] = a <= 0.0 ? 0.0 : 1.0;
    n->lk = 1;
    n->op = Py_NewRef(s_relu);
    return (PyObject *)n;
}

/* Value.dot(w, x, b=0.0): b + w[0]*x[0] + ..., in that order; children (*w, *x, b), local
 * derivatives (*x, *w, 1.0): engine.py's dot. NULL without an error: not this case, use Python */
static PyObject *dot_fast(PyObject *args) {
    Py_ssize_t na = PyTuple_GET_SIZE(args);
    if (watched || na < 2 || na > 3) return NULL;
    PyObject *w = PyTuple_GET_ITEM(args, 0), *x = PyTuple_GET_ITEM(args, 1);
    PyObject *b = na == 3 ? PyTuple_GET_ITEM(args, 2) : NULL, *lb = NULL;
    if (!(PyList_CheckExact(w) || PyTuple_CheckExact(w))) return NULL;
    if (!(PyList_CheckExact(x) || PyTuple_CheckExact(x))) return NULL;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(w);
    if (PySequence_Fast_GET_SIZE(x) != k) return NULL;
    PyObject **ws = PySequence_Fast_ITEMS(w), **xs = PySequence_Fast_ITEMS(x);
    for (Py_ssize_t i = 0; i < k; i++)
        if (!PLAIN(ws[i]) || !PLAIN(xs[i])) return NULL;
    double bd = 0.0;
    if (b != NULL && !PLAIN(b) && !number(b, &bd)) return NULL;
    if (b != NULL && PLAIN(b)) bd = ((Node *)b)->data;
    double out = bd;
    for (Py_ssize_t i = 0; i < k; i++) out += ((Node *)ws[i])->data * ((Node *)xs[i])->data;
    if (!isfinite(out)) return NULL;
    if (b == NULL || !PLAIN(b)) {
        b = lb = leaf(bd);
        if (lb == NULL) return NULL;
    }
    PyObject *prev = PyTuple_New(2 * k + 1), *local = PyTuple_New(2 * k + 1);
    Node *n = prev && local ? alloc() : NULL;
    for (Py_ssize_t i = 0; n && i < k; i++) {
        PyTuple_SET_ITEM(prev, i, Py_NewRef(ws[i]));
        PyTuple_SET_ITEM(prev, k + i, Py_NewRef(xs[i]));
        PyObject *dw = PyFloat_FromDouble(((Node *)xs[i])->data);
        PyObject *dx = PyFloat_FromDouble(((Node *)ws[i])->data);
        if (dw == NULL || dx == NULL) Py_CLEAR(n);
        PyTuple_SET_ITEM(local, i, dw);
        PyTuple_SET_ITEM(local, k + i, dx);
    }
    PyObject *one = n ? PyFloat_FromDouble(1.0) : NULL;
    if (one == NULL) {
        Py_XDECREF(n);
        Py_XDECREF(prev);
        Py_XDECREF(local);
        Py_XDECREF(lb);
        return NULL;
    }
    PyTuple_SET_ITEM(prev, 2 * k, Py_NewRef(b));
    PyTuple_SET_ITEM(local, 2 * k, one);
    /* the node's own tuples, as untracked as the node: a young collection had walked each one
     * (made here, freed with the graph), 40% of the moons demo's time (benchmarks/bench_engine.py) */
    PyObject_GC_UnTrack(prev);
    PyObject_GC_UnTrack(local);
    Py_XDECREF(lb);
    n->data = out;
    n->n = -1;
    n->c[0] = prev;
    n->u.obj = local;
    n->op = Py_NewRef(s_dot);
    return (PyObject *)n;
}

static PyObject *dot(PyObject *unused, PyObject *args, PyObject *kw) {
    PyObject *r = kw == NULL ? dot_fast(args) : NULL;
    if (r != NULL || PyErr_Occurred()) return r;
    PyObject *fn = PyDict_GetItemString(slow, "dot");
    return fn ? PyObject_Call(fn, args, kw) : PyErr_Format(PyExc_RuntimeError, "micrograd: no dot");
}

/* ------------------------------------------------------------------------- backward() */

/* v's children as an array (borrowed); 0: not a form C walks (then Python's backward runs) */
static int kids(Node *v, PyObject ***items, Py_ssize_t *k) {
    if (v->n >= 0) { *items = v->c; *k = v->n; return 1; }
    if (PyTuple_CheckExact(v->c[0])) {
        *items = &PyTuple_GET_ITEM(v->c[0], 0);
        *k = PyTuple_GET_SIZE(v->c[0]);
        for (Py_ssize_t i = 0; i < *k; i++) if (!IS_NODE((*items)[i])) return 0;
        return 1;
    }
    return 0;
}

static int truthy(PyObject *o) { return o != NULL && PyObject_IsTrue(o); }

/* backward()'s arrays of owned references: the walk's stack and the order it gives. A call
 * keeps them for the next (their memory faulted in once, not at every call: see the pool),
 * unless they outgrew POOL_MAX nodes; a backward() run inside another's (a learner's _backward)
 * uses arrays of its own. */
typedef struct {
    PyObject **a;
    Py_ssize_t n, cap;
} Refs;

static Refs kept[2];
static int kept_busy = 0;

static int push(Refs *r, PyObject *o) { /* append o, a reference of ours: the array's now */
    if (r->n == r->cap) {
        Py_ssize_t cap = r->cap ? 2 * r->cap : 1024;
        PyObject **a = PyMem_Realloc(r->a, (size_t)cap * sizeof(PyObject *));
        if (a == NULL) {
            Py_DECREF(o);
            PyErr_NoMemory();
            return -1;
        }
        r->a = a;
        r->cap = cap;
    }
    r->a[r->n++] = o;
    return 0;
}

static void let_go(Refs *r, int keep) { /* drop the references; keep the memory or free it */
    for (Py_ssize_t i = 0; i < r->n; i++) Py_XDECREF(r->a[i]);
    r->n = 0;
    if (!keep || r->cap > POOL_MAX) {
        PyMem_Free(r->a);
        r->a = NULL;
        r->cap = 0;
    }
}

/* topological_order(root, leaves=False) of core/walk.py, into `topo`: 1, 0 (fall back), -1;
 * and backward()'s `v.grad = 0.0` at each node with children, done here while v is in the cache
 * (a pass of its own read a big graph from memory once more) */
static int order(PyObject *root, Refs *topo, Refs *stack, PyObject *zero) {
    PyObject *opened = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    PyObject *done = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    int ok = opened && done && push(stack, Py_NewRef(root)) == 0 ? 1 : -1;
    while (ok == 1 && stack->n) {
        Node *v = (Node *)stack->a[--stack->n]; /* popped: its reference is ours */
        if (stack->n >= AHEAD) PREFETCH(stack->a[stack->n - AHEAD]);
        if (v->visit == done) { Py_DECREF(v); continue; }
        if (v->visit == opened) {
            Py_XSETREF(v->visit, Py_NewRef(done));
            if (push(topo, (PyObject *)v) < 0) ok = -1; /* the stack's reference, moved */
            continue;
        }
        PyObject **items;
        Py_ssize_t k;
        if (!kids(v, &items, &k)) { Py_DECREF(v); ok = 0; break; }
        Py_XSETREF(v->visit, Py_NewRef(opened));
        if (k > 0 && grad_set(v, zero, NULL) < 0) ok = -1;
        if (ok == 1 && push(stack, (PyObject *)v) < 0) ok = -1; /* (its reference, back) */
        else if (ok != 1) Py_DECREF(v);
        for (Py_ssize_t i = k - 1; ok == 1 && i >= 0; i--) {
            Node *ch = (Node *)items[i];
            if (ch->visit == done) continue;
            int keep = ch->n > 0 || ch->lk || (ch->n < 0 && truthy(ch->c[0])) || truthy(ch->u.obj);
            if (PyErr_Occurred()) ok = -1;
            else if (keep && push(stack, Py_NewRef(ch)) < 0) ok = -1;
        }
    }
    Py_XDECREF(opened);
    Py_XDECREF(done);
    return ok;
}

/* child.grad += local * v.grad, through Python's attributes and operators */
static int generic_step(PyObject *v, PyObject *child, PyObject *local) {
    PyObject *g = PyObject_GetAttr(v, s_grad), *p = NULL, *cg = NULL, *sum = NULL;
    int r = -1;
    if (g && (p = PyNumber_Multiply(local, g)) && (cg = PyObject_GetAttr(child, s_grad)) &&
        (sum = PyNumber_InPlaceAdd(cg, p)))
        r = PyObject_SetAttr(child, s_grad, sum);
    Py_XDECREF(g);
    Py_XDECREF(p);
    Py_XDECREF(cg);
    Py_XDECREF(sum);
    return r;
}

static int step(Node *v) { /* engine.py's loop body, at one node */
    PyObject **items, *local;
    Py_ssize_t k;
    if (v->lk) {
        for (int i = 0; i < v->n; i++) {
            Node *ch = (Node *)v->c[i];
            if (ch->odd == NULL && v->odd == NULL) {
                ch->grad += v->u.l[i] * v->grad;
            } else {
                PyObject *d = PyFloat_FromDouble(v->u.l[i]);
                int r = d ? generic_step((PyObject *)v, (PyObject *)ch, d) : -1;
                Py_XDECREF(d);
                if (r < 0) return -1;
            }
        }
        return 0;
    }
    local = v->u.obj;
    PyObject *prev = v->n < 0 ? v->c[0] : NULL;
    Py_ssize_t np = v->n >= 0 ? v->n : PyObject_Length(prev);
    if (np < 0) return -1;
    if (local == NULL || !PyTuple_CheckExact(local) || PyTuple_GET_SIZE(local) != np) {
        PyObject *fn = PyObject_GetAttr((PyObject *)v, s_backward); /* a learner's _backward */
        PyObject *r = fn ? PyObject_CallNoArgs(fn) : NULL;
        Py_XDECREF(fn);
        Py_XDECREF(r);
        return r ? 0 : -1;
    }
    if (!kids(v, &items, &k)) return -1;
    Py_INCREF(local);
    int r = 0;
    for (Py_ssize_t i = 0; r == 0 && i < k; i++) {
        PyObject *d = PyTuple_GET_ITEM(local, i);
        Node *ch = (Node *)items[i];
        if (PyFloat_CheckExact(d) && ch->odd == NULL && v->odd == NULL)
            ch->grad += PyFloat_AS_DOUBLE(d) * v->grad;
        else
            r = generic_step((PyObject *)v, (PyObject *)ch, d);
    }
    Py_DECREF(local);
    return r;
}

static PyObject *backward(PyObject *self, PyObject *unused) {
    if (watched) return call_slow("backward", self, NULL);
    int mine = !kept_busy; /* the kept arrays, or (inside another backward()) arrays of its own */
    Refs local[2] = {{NULL, 0, 0}, {NULL, 0, 0}}, *topo = mine ? &kept[0] : &local[0];
    Refs *stack = mine ? &kept[1] : &local[1];
    kept_busy = 1;
    PyObject *zero = PyFloat_FromDouble(0.0);
    int ok = zero ? order(self, topo, stack, zero) : -1;
    Py_XDECREF(zero);
    let_go(stack, mine);
    Node *s = (Node *)self;
    int has_prev = ok > 0 && (s->n > 0 || (s->n < 0 && truthy(s->c[0])));
    if (PyErr_Occurred()) ok = -1;
    if (ok > 0 && (has_prev || s->odd == NULL)) {
        double g = has_prev ? 1.0 : s->grad + 1.0;
        PyObject *gg = PyFloat_FromDouble(g);
        if (gg == NULL || grad_set(s, gg, NULL) < 0) ok = -1;
        Py_XDECREF(gg);
    } else if (ok > 0) {
        PyObject *one = PyFloat_FromDouble(1.0), *g = grad_get(s, NULL), *sum = NULL;
        if (!(one && g && (sum = PyNumber_Add(g, one)) && grad_set(s, sum, NULL) == 0)) ok = -1;
        Py_XDECREF(one);
        Py_XDECREF(g);
        Py_XDECREF(sum);
    }
    for (Py_ssize_t i = topo->n - 1; ok > 0 && i >= 0; i--) {
        PyObject *v = topo->a[i];
        if (i >= AHEAD) PREFETCH(topo->a[i - AHEAD]);
        if (step((Node *)v) < 0) ok = -1;
        topo->a[i] = NULL; /* let go of v while it is in the cache */
        Py_DECREF(v);
    }
    let_go(topo, mine);
    if (mine) kept_busy = 0;
    if (ok == 0) return call_slow("backward", self, NULL);
    if (ok < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef node_methods[] = {
    {"relu", relu, METH_NOARGS, "max(self, 0): the ReLU op (engine.py's rule, compiled)."},
    {"dot", (PyCFunction)(void (*)(void))dot, METH_VARARGS | METH_KEYWORDS | METH_STATIC,
     "A fused op: b + w[0]*x[0] + w[1]*x[1] + ..., one node (engine.py's, compiled)."},
    {"backward", backward, METH_NOARGS,
     "Fill `.grad` of every node this Value depends on with d(self)/d(node) (engine.py's loop, "
     "compiled)."},
    {NULL},
};

static PyNumberMethods node_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_sub_entry,
    .nb_multiply = nb_mul,
    .nb_negative = nb_neg,
};

static PyTypeObject NodeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "micrograd.core.cvalue.Node",
    .tp_doc = "A Value's storage, compiled (micrograd/core/cvalue.c).",
    .tp_basicsize = sizeof(Node),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = node_new,
    .tp_dealloc = (destructor)node_dealloc,
    .tp_traverse = (traverseproc)node_traverse,
    .tp_clear = (inquiry)node_clear,
    .tp_setattro = node_setattro,
    .tp_getset = node_getset,
    .tp_methods = node_methods,
    .tp_as_number = &node_number,
    .tp_dictoffset = offsetof(Node, dict),
};

/* ------------------------------------------------------------------------- the module */

static PyObject *setup(PyObject *m, PyObject *args) {
    PyObject *cls, *methods;
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &cls, &PyDict_Type, &methods)) return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)cls, &NodeType))
        return PyErr_Format(PyExc_TypeError, "setup: %R is not a Node", cls);
    drain(); /* its nodes were made for the Value before */
    Py_XSETREF(V, (PyTypeObject *)Py_NewRef(cls));
    Py_XSETREF(slow, Py_NewRef(methods));
    Py_RETURN_NONE;
}

static PyObject *set_watched(PyObject *m, PyObject *flag) {
    int f = PyObject_IsTrue(flag);
    if (f < 0) return NULL;
    watched = f;
    Py_RETURN_NONE;
}

/* release(): the memory kept for the next graph back to Python's allocator (which returns its
 * emptied arenas to the system): the pool's nodes, and backward()'s arrays unless a backward()
 * is running. Returns how many nodes the pool held. */
static PyObject *release(PyObject *m, PyObject *unused) {
    Py_ssize_t n = pooled;
    drain();
    if (!kept_busy) {
        let_go(&kept[0], 0);
        let_go(&kept[1], 0);
    }
    return PyLong_FromSsize_t(n);
}

static PyObject *pool_size(PyObject *m, PyObject *unused) { return PyLong_FromSsize_t(pooled); }

static PyObject *node_size(PyObject *m, PyObject *unused) {
    return PyLong_FromSsize_t((Py_ssize_t)sizeof(Node));
}

static PyMethodDef module_methods[] = {
    {"setup", setup, METH_VARARGS, "setup(Value, slow): the class C makes, the Python methods"},
    {"set_watched", set_watched, METH_O, "set_watched(flag): jit watches reads, all in Python"},
    {"node_size", node_size, METH_NOARGS, "sizeof the C node"},
    {"release", release, METH_NOARGS, "release(): free the pooled nodes; how many there were"},
    {"pool_size", pool_size, METH_NOARGS, "pool_size(): freed nodes kept for the next graph"},
    {NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cvalue", NULL, -1, module_methods};

PyMODINIT_FUNC PyInit_cvalue(void) {
    if (PyType_Ready(&NodeType) < 0) return NULL;
    PyObject *slots = Py_BuildValue("(sssssss)", "data", "grad", "label", "_prev", "_op",
                                    "_local", "_visit");
    if (slots == NULL || PyDict_SetItemString(NodeType.tp_dict, "__slots__", slots) < 0) return NULL;
    Py_DECREF(slots);
    PyType_Modified(&NodeType);
    s_add = PyUnicode_InternFromString("+");
    s_relu = PyUnicode_InternFromString("ReLU");
    s_dot = PyUnicode_InternFromString("dot");
    s_mul = PyUnicode_InternFromString("*");
    s_empty = PyUnicode_InternFromString("");
    s_grad = PyUnicode_InternFromString("grad");
    s_backward = PyUnicode_InternFromString("_backward");
    e_tuple = PyTuple_New(0);
    PyObject *m = PyModule_Create(&module);
    if (m == NULL || PyModule_AddObjectRef(m, "Node", (PyObject *)&NodeType) < 0) return NULL;
    return m;
}
