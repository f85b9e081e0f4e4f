/* tensor_queue.c - a model with a stateful object: a tensor queue (PyTorch's torchbind test
 * class _TorchScriptTesting::_TensorQueue) passed as an input. With torchbind tracing on, each
 * method call is one call_torchbind node; the pushes and the size() call have no users, and
 * dce / cse must keep all of them because call_torchbind is side-effectful. Its PyTorch twin is
 * in tools/interop/gen_hop.py. The model leaves the queue as it found it (two pushes, two pops),
 * so running it again, eagerly or as a graph, gives the same result. */
#include <pthread.h>

#include "cfx.h"
#include "hop/torchbind.h"
#include "tools/models/models.h"

static cfx_tensor *call1(cfx_object *q, const char *m, cfx_tensor *arg)
{
    cfx_value a = cfx_tensor_value(arg), out = cfx_none();
    if (cfx_object_call_method(q, m, &a, arg ? 1 : 0, &out) != CFX_OK)
        return NULL;
    return out.kind == CFX_V_TENSOR ? out.u.t : NULL;
}

static cfx_tensor2 queue_forward(const cfx_value *tq, cfx_tensor *x)
{
    cfx_object *q = cfx_value_object(*tq);
    bool was = cfx_torchbind_tracing_set(true); /* enable_torchbind_tracing() */
    cfx_value none;
    cfx_value c = cfx_tensor_value(cfx_cos(x));
    cfx_object_call_method(q, "push", &c, 1, &none);
    cfx_value s = cfx_tensor_value(cfx_sin(x));
    cfx_object_call_method(q, "push", &s, 1, &none);
    cfx_tensor *a = call1(q, "pop", NULL);
    cfx_tensor *b = call1(q, "pop", NULL);
    cfx_value size;
    cfx_object_call_method(q, "size", NULL, 0, &size);
    cfx_torchbind_tracing_set(was);
    return (cfx_tensor2){cfx_add(a, b), x};
}

/* One queue per thread: the model's object outlives its traces, and a queue is mutable state
 * its traces push to and pop from, so threads tracing the model at the same time must not
 * share one (their pushes would interleave; `make tsan` found the race). Released when its
 * thread exits. */
static pthread_key_t queue_key;
static pthread_once_t queue_key_once = PTHREAD_ONCE_INIT;
static void queue_key_free(void *q) { cfx_object_release(q); }
static void queue_key_make(void) { (void)pthread_key_create(&queue_key, queue_key_free); }

static int queue_setup(cfx_module **module, cfx_value *args)
{
    static const int64_t shape[2] = {2, 3};
    int64_t zero[1] = {0};
    pthread_once(&queue_key_once, queue_key_make);
    cfx_object *queue = pthread_getspecific(queue_key);
    if (!queue) {
        /* init in a scope of its own: the queue's reference is then its only one, whether or not
         * the caller has a scope open (releasing it by hand inside the caller's scope freed
         * it under the queue, a use-after-free TSan saw at thread exit) */
        cfx_scope s = cfx_scope_begin();
        cfx_tensor *init = cfx_tensor_new(zero, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
        queue = init ? cfx_tensor_queue_new(init) : NULL;
        cfx_scope_end(s);
        if (queue && pthread_setspecific(queue_key, queue) != 0) {
            cfx_object_release(queue);
            queue = NULL;
        }
    }
    cfx_tensor *x = cfx_model_example_tensor(shape, 2, 0);
    if (!queue || !x)
        return -1;
    *module = NULL;
    args[0] = cfx_object_value(queue);
    args[1] = cfx_tensor_value(x);
    return 2;
}

const cfx_model cfx_model_tensor_queue = {
    "tensor_queue", "a stateful _TorchScriptTesting::_TensorQueue input: call_torchbind nodes dce/cse keep",
    "(__torch__.torch.classes._TorchScriptTesting._TensorQueue tq, Tensor x) -> (Tensor, Tensor)",
    (cfx_fnptr)queue_forward, queue_setup,
};
