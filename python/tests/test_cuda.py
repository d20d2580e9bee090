"""esmm on the GPU through PyTorch and CuPy: results against float64,
the caller's stream, esmm.torch.Linear and torch.compile. Skipped without a
GPU or without the framework."""
import numpy as np
import pytest
from conftest import assert_close, blocky, reference

import esmm

torch = pytest.importorskip("torch")
import esmm.torch  # noqa: E402  (needs torch)
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)


def cuda(x):
    return torch.from_numpy(x).cuda()


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (97, 61, 131), (256, 384, 512)])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("density", [1.0, 0.25])
def test_torch_matches_float64(rng, m, n, k, transpose_a, transpose_b, density):
    a = blocky(rng, *((k, m) if transpose_a else (m, k)), density)
    b = blocky(rng, *((n, k) if transpose_b else (k, n)), density)
    c = esmm.matmul(cuda(a), cuda(b), transpose_a=transpose_a, transpose_b=transpose_b)
    assert c.is_cuda and c.dtype == torch.float32 and tuple(c.shape) == (m, n)
    assert_close(c.cpu().numpy(), *reference(a, b, transpose_a=transpose_a,
                                              transpose_b=transpose_b))


def test_torch_out_alpha_beta_and_side_stream(rng):
    a, b = blocky(rng, 300, 200, 0.5), blocky(rng, 200, 100, 0.5)
    c0 = rng.standard_normal((300, 100)).astype(np.float32)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        out = cuda(c0)
        esmm.matmul(cuda(a), cuda(b), out=out, alpha=2.0, beta=-1.0)
    stream.synchronize()
    assert_close(out.cpu().numpy(), *reference(a, b, 2.0, -1.0, c0))


def test_torch_out_moves_its_version_counter(rng):
    # esmm writes out as an in-place op would: autograd must see it.
    a, b = cuda(blocky(rng, 32, 48, 0.5)), cuda(blocky(rng, 48, 16, 0.5))
    out = torch.zeros(32, 16, device="cuda")
    version = out._version
    esmm.matmul(a, b, out=out)
    assert out._version > version
    w = cuda(blocky(rng, 48, 48, 0.5)).to_sparse_csr()
    y = torch.zeros(48, 16, device="cuda")
    version = y._version
    esmm.csrmm(w, b, out=y)
    assert y._version > version


def test_torch_analyze_reports_what_matmul_runs(rng):
    # C 10 wide (and past the minimum planned work): esmm.matmul runs the
    # dense kernel unplanned, and so does esmm.analyze, though a call given
    # b's pattern would be planned.
    a, b = blocky(rng, 8192, 4096, 0.25), blocky(rng, 10, 4096, 0.25)
    info = esmm.analyze(cuda(a), cuda(b), transpose_b=True)
    assert info.path == "dense" and info.masks == "narrow"


def test_torch_errors_are_named():
    with pytest.raises(TypeError, match="float32"):
        esmm.matmul(torch.ones(3, 4, device="cuda", dtype=torch.float16),
                    torch.ones(4, 2, device="cuda"))
    with pytest.raises(ValueError, match="not adjacent"):
        esmm.matmul(torch.ones(4, 3, device="cuda").t(), torch.ones(4, 2, device="cuda"))
    with pytest.raises(ValueError, match="host"):
        esmm.matmul(torch.ones(3, 4, device="cuda"), torch.ones(4, 2))


def test_torch_sparse_csr(rng):
    dense = blocky(rng, 64, 48, 0.3, block=(1, 1))
    w = torch.from_numpy(dense).cuda().to_sparse_csr()
    b = blocky(rng, 48, 32, 0.1, block=(1, 1))
    c = esmm.csrmm(w, cuda(b))
    assert_close(c.cpu().numpy(), *reference(dense, b))
    y = esmm.csrmm(w, cuda(b[:, 0].copy()))
    assert tuple(y.shape) == (64,)
    want, bound = reference(dense, b[:, :1])
    assert_close(y.cpu().numpy().reshape(64, 1), want, bound)


def test_torch_subclass_is_a_torch_tensor(rng):
    # A subclass made outside torch runs as torch (its device, its stream,
    # a torch result), not as a bare __cuda_array_interface__.
    class Tagged(torch.Tensor):
        pass

    a, b = blocky(rng, 40, 72, 0.5), blocky(rng, 72, 24, 0.5)
    c = esmm.matmul(cuda(a).as_subclass(Tagged), cuda(b).as_subclass(Tagged))
    assert isinstance(c, torch.Tensor)
    assert_close(c.cpu().numpy(), *reference(a, b))


def test_linear_matches_torch(rng):
    torch.manual_seed(0)
    layer = torch.nn.Linear(96, 40).cuda()
    with torch.no_grad():
        layer.weight[:, :32] = 0  # zero columns of W: skippable k
    ours = esmm.torch.Linear.from_linear(layer)
    x = torch.relu(torch.randn(5, 7, 96, device="cuda"))
    with torch.no_grad():
        want = layer(x).double()
        got = ours(x)
        again = ours(x)  # the pattern extracted by the first call is reused
    assert torch.equal(got, again)
    assert torch.allclose(got.double(), want, rtol=1e-5, atol=1e-5)
    kept = esmm.torch.Linear.from_linear(layer, keep_copy=True)
    with torch.no_grad():
        assert torch.equal(kept(x), got)  # reads the weight's copy: the same bits


def test_linear_sees_weight_updates(rng):
    # Zero k blocks first, then nonzeros written into them in place: a stale
    # pattern would skip the new products (zeroing, the other way, cannot show it).
    layer = esmm.torch.Linear(64, 8).cuda()
    x = torch.randn(4, 64, device="cuda")
    with torch.no_grad():
        layer.weight[:, 32:] = 0
        layer(x)
        layer.weight[:, 32:] = torch.randn(8, 32, device="cuda")
        want = torch.nn.functional.linear(x, layer.weight, layer.bias)
        assert torch.allclose(layer(x), want, rtol=1e-5, atol=1e-5)


def test_linear_refresh_after_a_change_through_data(rng):
    layer = esmm.torch.Linear(64, 8).cuda()
    x = torch.randn(4, 64, device="cuda")
    with torch.no_grad():
        layer.weight[:, 32:] = 0  # a pattern with zero k blocks
        layer(x)
        version = layer.weight._version
        layer.weight.data.copy_(torch.randn(8, 64, device="cuda"))  # moves no counter
        assert layer.weight._version == version
        layer.refresh_pattern()
        want = torch.nn.functional.linear(x, layer.weight, layer.bias)
        assert torch.allclose(layer(x), want, rtol=1e-5, atol=1e-5)


def test_linear_copies_keep_their_own_patterns(rng):
    # A copy shares the weight or has its own, and its pattern follows:
    # neither a later layer nor the original's end may change its result.
    import copy
    import gc

    x = torch.randn(6, 64, device="cuda")
    with torch.no_grad():
        layer = esmm.torch.Linear(64, 16, keep_copy=True).cuda()
        layer.weight[:, :32] = 0
        layer(x)
        shallow, deep = copy.copy(layer), copy.deepcopy(layer)
        deep.weight.mul_(2)
        want = torch.nn.functional.linear(x, layer.weight, layer.bias)
        want_deep = torch.nn.functional.linear(x, deep.weight, deep.bias)
        assert torch.allclose(deep(x), want_deep, rtol=1e-5, atol=1e-5)
        assert torch.allclose(layer(x), want, rtol=1e-5, atol=1e-5)
        # New layers until one takes the ended original's id (a key by id
        # once let the copy read that layer's weight).
        ended = id(layer)
        del layer
        gc.collect()
        others = []
        for _ in range(200):
            others.append(esmm.torch.Linear(64, 16, keep_copy=True).cuda())
            others[-1](x)
            if id(others[-1]) == ended:
                break
        assert torch.allclose(shallow(x), want, rtol=1e-5, atol=1e-5)
        assert torch.allclose(deep(x), want_deep, rtol=1e-5, atol=1e-5)
    registered = len(esmm.torch._patterns)
    del shallow, deep, others
    gc.collect()
    assert len(esmm.torch._patterns) < registered  # the entries go with their modules


def test_linear_with_an_inference_weight(rng):
    # A weight made under inference_mode has no version counter.
    with torch.inference_mode():
        layer = esmm.torch.Linear(64, 8).cuda()
        x = torch.randn(4, 64, device="cuda")
        want = torch.nn.functional.linear(x, layer.weight, layer.bias)
        assert torch.allclose(layer(x), want, rtol=1e-5, atol=1e-5)


def test_pattern_from_a_side_stream_serves_another_thread(rng):
    # The extraction is waited for, so a product on another thread's handle
    # and stream reads whole masks.
    import threading

    a = cuda(blocky(rng, 256, 512, 0.25))
    w = cuda(blocky(rng, 384, 512, 0.25))
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        pattern = esmm.pattern_b(w, transpose_b=True, keep_copy=True)
    want = esmm.matmul(a, w, transpose_b=True)
    got = {}

    def other():
        with torch.cuda.stream(torch.cuda.Stream()):
            got["c"] = esmm.matmul(a, w, transpose_b=True, pattern_b=pattern)
            torch.cuda.current_stream().synchronize()

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert torch.equal(got["c"], want)


def test_linear_inside_torch_compile(rng):
    layer = esmm.torch.Linear(64, 32).cuda()
    model = torch.nn.Sequential(torch.nn.ReLU(), layer)
    compiled = torch.compile(model)
    x = torch.randn(8, 64, device="cuda")
    with torch.no_grad():
        want = torch.nn.functional.linear(torch.relu(x), layer.weight, layer.bias)
        assert torch.allclose(compiled(x), want, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="one CUDA device")
def test_torch_on_a_second_device_while_the_first_is_current(rng):
    # Tensors on cuda:1 with cuda:0 current: the products run on cuda:1, and
    # a pattern made there answers and is freed from cuda:0, which stays
    # current.
    import gc

    a, b = blocky(rng, 300, 200, 0.25), blocky(rng, 200, 100, 0.25)
    x, w = torch.from_numpy(a).to("cuda:1"), torch.from_numpy(b).to("cuda:1")
    with torch.cuda.device(0):
        c = esmm.matmul(x, w)
        pattern = esmm.pattern_b(w)
        density = pattern.density
        c_pattern = esmm.matmul(x, w, pattern_b=pattern)
        torch.cuda.synchronize(1)
        del pattern
        gc.collect()
        assert torch.cuda.current_device() == 0
    assert c.device == x.device and c_pattern.device == x.device
    assert 0.0 < density < 1.0
    for got in (c, c_pattern):
        assert_close(got.cpu().numpy(), *reference(a, b))


def test_cupy_matches_float64(rng):
    cupy = pytest.importorskip("cupy")
    a, b = blocky(rng, 130, 70, 0.25), blocky(rng, 70, 90, 0.25)
    c = esmm.matmul(cupy.asarray(a), cupy.asarray(b))
    assert isinstance(c, cupy.ndarray)
    assert_close(cupy.asnumpy(c), *reference(a, b))


def test_cupy_stream_may_end_after_a_product(rng):
    # The thread's handle stays bound to the last stream it ran on, and
    # orders its next stream after it: that stream must outlive the binding
    # even when the caller drops it.
    import gc

    cupy = pytest.importorskip("cupy")
    a, b = blocky(rng, 200, 300, 0.25), blocky(rng, 300, 100, 0.25)
    for _ in range(3):
        with cupy.cuda.Stream(non_blocking=True):
            first = esmm.matmul(cupy.asarray(a), cupy.asarray(b))
            cupy.cuda.get_current_stream().synchronize()
        gc.collect()
        with cupy.cuda.Stream(non_blocking=True) as stream:
            second = esmm.matmul(cupy.asarray(a), cupy.asarray(b))
            stream.synchronize()
        assert np.array_equal(cupy.asnumpy(first), cupy.asnumpy(second))
    assert_close(cupy.asnumpy(second), *reference(a, b))


def test_cuda_array_interface_stream_and_mask(rng):
    # Another __cuda_array_interface__ array runs on the stream it names;
    # a masked one is refused.
    cupy = pytest.importorskip("cupy")
    a = cupy.asarray(blocky(rng, 64, 96, 0.5))
    b = cupy.asarray(blocky(rng, 96, 48, 0.5))

    class Plain:
        def __init__(self, x, **extra):
            self.__cuda_array_interface__ = dict(x.__cuda_array_interface__, **extra)

    stream = cupy.cuda.Stream(non_blocking=True)
    out = cupy.empty((64, 48), dtype=cupy.float32)
    esmm.matmul(Plain(a, stream=stream.ptr), Plain(b, stream=stream.ptr),
                out=Plain(out, stream=stream.ptr))
    stream.synchronize()
    assert_close(cupy.asnumpy(out), *reference(cupy.asnumpy(a), cupy.asnumpy(b)))
    with pytest.raises(ValueError, match="masked"):
        esmm.matmul(Plain(a, mask=a), b)
