"""esmm on a real ReLU network, with no download: trains a small MLP on the
handwritten-digits dataset that ships inside scikit-learn, then multiplies
each layer's real input (post-ReLU activations after the first layer) by its
real weights with esmm.matmul and with torch.matmul, and prints per layer the
zero statistics, the path esmm takes, the times and the error.

    python examples/mlp_real_data.py [--hidden 2048] [--save DIR]

Needs PyTorch and scikit-learn; on a GPU it times CUDA, else the CPU backend.
--save writes every layer's input and weight as float32 .npy files, for
`esmm analyze DIR/layerN_input.npy DIR/layerN_weight.npy --transb T --bench`
(the weight is stored out x in, so the layer computes input @ weight^T).
"""
import argparse
import os
import statistics
import time

import numpy as np
import torch
from sklearn.datasets import load_digits

import esmm


def train(x, y, hidden, device, epochs=60):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(x.shape[1], hidden), torch.nn.ReLU(),
              torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
              torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
              torch.nn.Linear(hidden, 10)]
    model = torch.nn.Sequential(*layers).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        for batch in torch.randperm(len(x), device=device).split(128):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[batch]), y[batch])
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    return model, accuracy


def median_ms(run, device, runs=20, warmup=5):
    for _ in range(warmup):
        run()
    times = []
    for _ in range(runs):
        if device.type == "cuda":
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        else:
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def layer_inputs(model, x):
    """(input, linear layer) pairs: the real operands of each product."""
    pairs, h = [], x
    with torch.no_grad():
        for module in model:
            if isinstance(module, torch.nn.Linear):
                pairs.append((h.contiguous(), module))
            h = module(h)
    return pairs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--save", help="directory for the layers' .npy files")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = False  # FP32 against FP32

    digits = load_digits()
    x = torch.tensor(digits.data / 16.0, dtype=torch.float32, device=device)
    y = torch.tensor(digits.target, device=device)
    model, accuracy = train(x, y, args.hidden, device)
    print(f"esmm {esmm.library_version()} on {device}: MLP 64-{args.hidden}-{args.hidden}-"
          f"{args.hidden}-10 trained on scikit-learn's digits ({len(x)} images), "
          f"training accuracy {accuracy:.3f}")
    print("each layer: input (all images) @ weight^T; times are medians of 20 after 5 warm-up")
    print(f"{'layer':<6} {'m x n x k':<18} {'zeros in':>8} {'slices in':>9} {'zeros W':>8} "
          f"{'path':<7} {'work':>6} {'torch ms':>9} {'esmm ms':>8} {'x torch':>8} {'max err':>9}")
    for index, (inputs, linear) in enumerate(layer_inputs(model, x), start=1):
        weight = linear.weight.detach().contiguous()
        m, k = inputs.shape
        n = weight.shape[0]
        info = esmm.analyze(inputs, weight, transpose_b=True)
        want = inputs.double() @ weight.double().T
        got = esmm.matmul(inputs, weight, transpose_b=True)
        scale = inputs.abs().double() @ weight.abs().double().T
        error = ((got.double() - want).abs() / scale.clamp_min(1e-30)).max().item()
        out = torch.empty_like(got)
        t_torch = median_ms(lambda: torch.matmul(inputs, weight.T, out=out), device)
        t_esmm = median_ms(lambda: esmm.matmul(inputs, weight, out=out, transpose_b=True), device)
        print(f"{index:<6} {f'{m} x {n} x {k}':<18} {info.zero_fraction_a:>8.1%} "
              f"{info.slice_density_a:>9.1%} {info.zero_fraction_b:>8.1%} {info.path:<7} "
              f"{info.work_fraction:>6.1%} {t_torch:>9.4f} {t_esmm:>8.4f} "
              f"{t_torch / t_esmm:>8.2f} {error:>9.1e}")
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            np.save(os.path.join(args.save, f"layer{index}_input.npy"), inputs.cpu().numpy())
            np.save(os.path.join(args.save, f"layer{index}_weight.npy"), weight.cpu().numpy())
    print("zeros in: exact zeros of the layer's input; slices in: the share of (32-row strip, "
          "k) slices of it holding a nonzero, which is what esmm can skip by; work: the share "
          "of the dense work esmm ran")


if __name__ == "__main__":
    main()
