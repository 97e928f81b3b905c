"""Device-to-device copy bandwidth by size (traffic = read + write)."""
import cupy
from spla.bench.timing import time_gpu
for mb in (32, 64, 128, 192, 256, 384, 512, 1024, 2048, 4096):
    n = mb * (1 << 20) // 2 // 8
    src = cupy.random.random(n); dst = cupy.empty_like(src)
    t = time_gpu(lambda: dst.__setitem__(slice(None), src), repeat=60, warmup=5)
    print(f"copy {mb:5d} MiB traffic: {2 * src.nbytes / t.median / 1e9:6.0f} GB/s  {t.median * 1e6:8.1f} us", flush=True)
    del src, dst
