/* tensor_queue.c - the built-in stateful class _TorchScriptTesting::_TensorQueue.
 *
 * PyTorch's torchbind tests use this class (test/cpp/jit/test_custom_class_registrations.cpp)
 * because a queue is the smallest object whose methods mutate state: a traced push must never
 * be dropped or merged by a pass, and a fake trace must not push into the real queue. The C
 * version keeps the same method names, schemas and empty-queue behaviour (pop / top return the
 * init tensor). Queued tensors are retained by the queue; pop hands its reference to the
 * caller's scope. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "hop/fake_class.h"
#include "hop/torchbind.h"

typedef struct queue {
    cfx_tensor *init;
    cfx_tensor **items;
    cfx_value *flat; /* __obj_flatten__'s list items (rebuilt per call) */
    int64_t head, n, cap;
} queue;

static void queue_free(void *p)
{
    queue *q = p;
    for (int64_t i = 0; i < q->n; i++)
        cfx_tensor_release(q->items[q->head + i]);
    cfx_tensor_release(q->init);
    cfx_free(q->items);
    cfx_free(q->flat);
    cfx_free(q);
}

static queue *state(cfx_object *self) { return cfx_script_object_state(self); }

static void queue_push(queue *q, cfx_tensor *x)
{
    if (q->head + q->n == q->cap) {
        if (q->head > 0) {
            memmove(q->items, q->items + q->head, (size_t)q->n * sizeof *q->items);
            q->head = 0;
        }
        if (q->n == q->cap) {
            int64_t cap = q->cap ? q->cap * 2 : 8;
            cfx_tensor **a = cfx_realloc(q->items, (size_t)cap * sizeof *a);
            if (!a) {
                cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
                return;
            }
            q->items = a;
            q->cap = cap;
        }
    }
    q->items[q->head + q->n++] = cfx_tensor_retain(x);
}

static void push(cfx_object *self, cfx_tensor *x) { queue_push(state(self), x); }

static cfx_tensor *pop(cfx_object *self)
{
    queue *q = state(self);
    if (q->n == 0)
        return q->init;
    cfx_tensor *t = q->items[q->head++];
    q->n--;
    return cfx_autorelease(t);
}

static cfx_tensor *top(cfx_object *self)
{
    queue *q = state(self);
    return q->n ? q->items[q->head] : q->init;
}

static int64_t size(cfx_object *self) { return state(self)->n; }
static bool is_empty(cfx_object *self) { return state(self)->n == 0; }
static double float_size(cfx_object *self) { return (double)state(self)->n; }

static int flatten(void *p, cfx_named_value *out, int cap, int *n)
{
    queue *q = p;
    *n = 0;
    if (cap < 1)
        return CFX_OK;
    cfx_free(q->flat);
    q->flat = q->n ? cfx_malloc((size_t)q->n * sizeof *q->flat) : NULL;
    if (q->n && !q->flat)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    for (int64_t i = 0; i < q->n; i++)
        q->flat[i] = cfx_tensor_value(q->items[q->head + i]);
    out[0] = (cfx_named_value){"queue", cfx_list(q->flat, (uint32_t)q->n)};
    *n = 1;
    return CFX_OK;
}

static cfx_class *cls;

void hop_tensor_queue_register(void)
{
    cls = cfx_class_register("_TorchScriptTesting::_TensorQueue", queue_free, flatten);
    if (!cls)
        return;
    cfx_class_def_method(cls, "push(Tensor x) -> ()", (cfx_fnptr)push);
    cfx_class_def_method(cls, "pop() -> Tensor", (cfx_fnptr)pop);
    cfx_class_def_method(cls, "top() -> Tensor", (cfx_fnptr)top);
    cfx_class_def_method(cls, "is_empty() -> bool", (cfx_fnptr)is_empty);
    cfx_class_def_method(cls, "float_size() -> float", (cfx_fnptr)float_size);
    cfx_class_def_method(cls, "size() -> int", (cfx_fnptr)size);
}

cfx_class *cfx_tensor_queue_class(void)
{
    cfx_hop_init();
    return cls;
}

cfx_object *cfx_tensor_queue_new(cfx_tensor *init)
{
    cfx_class *c = cfx_tensor_queue_class();
    if (!c || !init) {
        cfx_error_set(CFX_ERR, NULL, "_TensorQueue: %s", c ? "NULL init tensor" : "the class is not registered");
        return NULL;
    }
    queue *q = cfx_calloc(1, sizeof *q);
    if (!q) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    q->init = cfx_tensor_retain(init);
    cfx_object *o = cfx_script_object_new(c, q);
    if (!o)
        queue_free(q);
    return o;
}

/* The fake class (PyTorch's FakeTensorQueue in torch.testing._internal.torchbind_impls): the
 * queue of fake tensors from __obj_flatten__; an empty fake queue pops torch.empty([]). Its
 * methods are the real ones, which only move tensors around; like PyTorch's it has no top. */
static void *fake_unflatten(const cfx_named_value *pairs, int n)
{
    if (n != 1 || strcmp(pairs[0].name, "queue") != 0 || pairs[0].value.kind != CFX_V_LIST) {
        cfx_error_set(CFX_ERR, NULL, "FakeTensorQueue.__init__() got an unexpected keyword argument");
        return NULL;
    }
    queue *q = cfx_calloc(1, sizeof *q);
    /* The queue owns one reference to init (queue_free releases it). Made in a scope of its
     * own and retained, so that holds whether or not the caller has a scope open: taking
     * cfx_tensor_new's result as the queue's reference let the caller's scope free it under
     * the queue (a use-after-free `make tsan` found when a thread's cached fake queue died). */
    cfx_scope s = cfx_scope_begin();
    if (q)
        q->init = cfx_tensor_retain(cfx_tensor_new(NULL, 0, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU)));
    cfx_scope_end(s);
    if (!q || !q->init) {
        cfx_free(q);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_value l = pairs[0].value;
    for (uint32_t i = 0; i < l.len; i++)
        if (l.u.items[i].kind == CFX_V_TENSOR)
            queue_push(q, l.u.items[i].u.t);
    return q;
}

int cfx_tensor_queue_register_fake(void)
{
    cfx_fake_class *f = cfx_fake_class_register("_TorchScriptTesting::_TensorQueue", fake_unflatten, queue_free);
    if (!f)
        return CFX_ERR;
    static const struct {
        const char *name;
        cfx_fnptr fn;
    } m[] = {{"push", (cfx_fnptr)push},     {"pop", (cfx_fnptr)pop},           {"size", (cfx_fnptr)size},
             {"is_empty", (cfx_fnptr)is_empty}, {"float_size", (cfx_fnptr)float_size}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (cfx_fake_class_def_method(f, m[i].name, m[i].fn) != CFX_OK)
            return CFX_ERR;
    return CFX_OK;
}
