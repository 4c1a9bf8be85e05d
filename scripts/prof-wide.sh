python3 -c "
import numpy as np
a=np.random.default_rng(1).integers(0,256,(8192,8192),dtype=np.uint8)
open('/tmp/in.pgm','wb').write(b'P5 8192 8192 255\n'+a.tobytes())"
for r in 1 15 64; do
ncu --kernel-name regex:tsr__box_wide --launch-count 1 --set full ./build/tessera --backend cuda --variant wide box --radius $r /tmp/in.pgm /tmp/out.pgm > $OUT/ncu-r$r.txt 2>&1
done
