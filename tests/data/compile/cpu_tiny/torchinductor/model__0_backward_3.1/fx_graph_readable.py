class GraphModule(torch.nn.Module):
    def forward(self, primals_3: "f32[4, 16, 32]", primals_4: "f32[128, 32]", primals_6: "f32[32, 128]", primals_8: "f32[32]", primals_10: "f32[128, 32]", primals_12: "f32[32, 128]", primals_14: "f32[8, 32]", getitem_1: "f32[4, 16, 1]", rsqrt: "f32[4, 16, 1]", view: "f32[64, 32]", addmm: "f32[64, 128]", view_2: "f32[64, 128]", addmm_1: "f32[64, 32]", getitem_3: "f32[4, 16, 1]", rsqrt_1: "f32[4, 16, 1]", view_4: "f32[64, 32]", addmm_2: "f32[64, 128]", view_6: "f32[64, 128]", view_8: "f32[64, 32]", le: "b8[4, 16, 8]", tangents_1: "f32[]"):
        # File: /work/wt/compile/scripts/compile_info_cpu.py:47 in forward, code: return self.head(x).relu().sum()
        expand: "f32[4, 16, 8]" = torch.ops.aten.expand.default(tangents_1, [4, 16, 8]);  tangents_1 = None
        full_default: "f32[]" = torch.ops.aten.full.default([], 0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
        where: "f32[4, 16, 8]" = torch.ops.aten.where.self(le, full_default, expand);  le = full_default = expand = None
        view_10: "f32[64, 8]" = torch.ops.aten.view.default(where, [64, 8]);  where = None
        permute_4: "f32[32, 8]" = torch.ops.aten.permute.default(primals_14, [1, 0]);  primals_14 = None
        permute_5: "f32[8, 32]" = torch.ops.aten.permute.default(permute_4, [1, 0]);  permute_4 = None
        mm: "f32[64, 32]" = torch.ops.aten.mm.default(view_10, permute_5);  permute_5 = None
        permute_6: "f32[8, 64]" = torch.ops.aten.permute.default(view_10, [1, 0])
        mm_1: "f32[8, 32]" = torch.ops.aten.mm.default(permute_6, view_8);  permute_6 = view_8 = None
        sum_2: "f32[1, 8]" = torch.ops.aten.sum.dim_IntList(view_10, [0], True);  view_10 = None
        view_11: "f32[8]" = torch.ops.aten.view.default(sum_2, [8]);  sum_2 = None
        view_12: "f32[4, 16, 32]" = torch.ops.aten.view.default(mm, [4, 16, 32]);  mm = None

        # File: /work/wt/compile/scripts/compile_info_cpu.py:25 in forward, code: return self.proj(nn.functional.gelu(self.fc(x)))
        view_13: "f32[64, 32]" = torch.ops.aten.view.default(view_12, [64, 32])
        permute_3: "f32[128, 32]" = torch.ops.aten.permute.default(primals_12, [1, 0]);  primals_12 = None
        permute_9: "f32[32, 128]" = torch.ops.aten.permute.default(permute_3, [1, 0]);  permute_3 = None
        mm_2: "f32[64, 128]" = torch.ops.aten.mm.default(view_13, permute_9);  permute_9 = None
        permute_10: "f32[32, 64]" = torch.ops.aten.permute.default(view_13, [1, 0])
        mm_3: "f32[32, 128]" = torch.ops.aten.mm.default(permute_10, view_6);  permute_10 = view_6 = None
        sum_3: "f32[1, 32]" = torch.ops.aten.sum.dim_IntList(view_13, [0], True);  view_13 = None
        view_14: "f32[32]" = torch.ops.aten.view.default(sum_3, [32]);  sum_3 = None
        view_15: "f32[4, 16, 128]" = torch.ops.aten.view.default(mm_2, [4, 16, 128]);  mm_2 = None
        view_5: "f32[4, 16, 128]" = torch.ops.aten.view.default(addmm_2, [4, 16, 128]);  addmm_2 = None
        mul_8: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_5, 0.7071067811865476)
        erf_1: "f32[4, 16, 128]" = torch.ops.aten.erf.default(mul_8);  mul_8 = None
        add_6: "f32[4, 16, 128]" = torch.ops.aten.add.Tensor(erf_1, 1);  erf_1 = None
        mul_11: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(add_6, 0.5);  add_6 = None
        mul_12: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_5, view_5)
        mul_13: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(mul_12, -0.5);  mul_12 = None
        exp: "f32[4, 16, 128]" = torch.ops.aten.exp.default(mul_13);  mul_13 = None
        mul_14: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(exp, 0.3989422804014327);  exp = None
        mul_15: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_5, mul_14);  view_5 = mul_14 = None
        add_9: "f32[4, 16, 128]" = torch.ops.aten.add.Tensor(mul_11, mul_15);  mul_11 = mul_15 = None
        mul_16: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_15, add_9);  view_15 = add_9 = None
        view_16: "f32[64, 128]" = torch.ops.aten.view.default(mul_16, [64, 128]);  mul_16 = None
        permute_2: "f32[32, 128]" = torch.ops.aten.permute.default(primals_10, [1, 0]);  primals_10 = None
        permute_13: "f32[128, 32]" = torch.ops.aten.permute.default(permute_2, [1, 0]);  permute_2 = None
        mm_4: "f32[64, 32]" = torch.ops.aten.mm.default(view_16, permute_13);  permute_13 = None
        permute_14: "f32[128, 64]" = torch.ops.aten.permute.default(view_16, [1, 0])
        mm_5: "f32[128, 32]" = torch.ops.aten.mm.default(permute_14, view_4);  permute_14 = view_4 = None
        sum_4: "f32[1, 128]" = torch.ops.aten.sum.dim_IntList(view_16, [0], True);  view_16 = None
        view_17: "f32[128]" = torch.ops.aten.view.default(sum_4, [128]);  sum_4 = None
        view_18: "f32[4, 16, 32]" = torch.ops.aten.view.default(mm_4, [4, 16, 32]);  mm_4 = None

        # File: /work/wt/compile/scripts/compile_info_cpu.py:35 in forward, code: return x + self.mlp(self.ln(x))
        mul_18: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(view_18, primals_8);  primals_8 = None
        mul_19: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(mul_18, 32)
        sum_5: "f32[4, 16, 1]" = torch.ops.aten.sum.dim_IntList(mul_18, [2], True)

        # File: /work/wt/compile/scripts/compile_info_cpu.py:25 in forward, code: return self.proj(nn.functional.gelu(self.fc(x)))
        view_3: "f32[4, 16, 32]" = torch.ops.aten.view.default(addmm_1, [4, 16, 32]);  addmm_1 = None

        # File: /work/wt/compile/scripts/compile_info_cpu.py:35 in forward, code: return x + self.mlp(self.ln(x))
        add_3: "f32[4, 16, 32]" = torch.ops.aten.add.Tensor(primals_3, view_3);  view_3 = None
        sub_1: "f32[4, 16, 32]" = torch.ops.aten.sub.Tensor(add_3, getitem_3);  add_3 = getitem_3 = None
        mul_5: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(sub_1, rsqrt_1);  sub_1 = None
        mul_20: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(mul_18, mul_5);  mul_18 = None
        sum_6: "f32[4, 16, 1]" = torch.ops.aten.sum.dim_IntList(mul_20, [2], True);  mul_20 = None
        mul_21: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(mul_5, sum_6);  sum_6 = None
        sub_3: "f32[4, 16, 32]" = torch.ops.aten.sub.Tensor(mul_19, sum_5);  mul_19 = sum_5 = None
        sub_4: "f32[4, 16, 32]" = torch.ops.aten.sub.Tensor(sub_3, mul_21);  sub_3 = mul_21 = None
        div: "f32[4, 16, 1]" = torch.ops.aten.div.Tensor(rsqrt_1, 32);  rsqrt_1 = None
        mul_22: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(div, sub_4);  div = sub_4 = None
        mul_23: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(view_18, mul_5);  mul_5 = None
        sum_7: "f32[32]" = torch.ops.aten.sum.dim_IntList(mul_23, [0, 1]);  mul_23 = None
        sum_8: "f32[32]" = torch.ops.aten.sum.dim_IntList(view_18, [0, 1]);  view_18 = None
        add_10: "f32[4, 16, 32]" = torch.ops.aten.add.Tensor(view_12, mul_22);  view_12 = mul_22 = None

        # File: /work/wt/compile/scripts/compile_info_cpu.py:25 in forward, code: return self.proj(nn.functional.gelu(self.fc(x)))
        view_19: "f32[64, 32]" = torch.ops.aten.view.default(add_10, [64, 32]);  add_10 = None
        permute_1: "f32[128, 32]" = torch.ops.aten.permute.default(primals_6, [1, 0]);  primals_6 = None
        permute_17: "f32[32, 128]" = torch.ops.aten.permute.default(permute_1, [1, 0]);  permute_1 = None
        mm_6: "f32[64, 128]" = torch.ops.aten.mm.default(view_19, permute_17);  permute_17 = None
        permute_18: "f32[32, 64]" = torch.ops.aten.permute.default(view_19, [1, 0])
        mm_7: "f32[32, 128]" = torch.ops.aten.mm.default(permute_18, view_2);  permute_18 = view_2 = None
        sum_9: "f32[1, 32]" = torch.ops.aten.sum.dim_IntList(view_19, [0], True);  view_19 = None
        view_20: "f32[32]" = torch.ops.aten.view.default(sum_9, [32]);  sum_9 = None
        view_21: "f32[4, 16, 128]" = torch.ops.aten.view.default(mm_6, [4, 16, 128]);  mm_6 = None
        view_1: "f32[4, 16, 128]" = torch.ops.aten.view.default(addmm, [4, 16, 128]);  addmm = None
        mul_3: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_1, 0.7071067811865476)
        erf: "f32[4, 16, 128]" = torch.ops.aten.erf.default(mul_3);  mul_3 = None
        add_2: "f32[4, 16, 128]" = torch.ops.aten.add.Tensor(erf, 1);  erf = None
        mul_25: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(add_2, 0.5);  add_2 = None
        mul_26: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_1, view_1)
        mul_27: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(mul_26, -0.5);  mul_26 = None
        exp_1: "f32[4, 16, 128]" = torch.ops.aten.exp.default(mul_27);  mul_27 = None
        mul_28: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(exp_1, 0.3989422804014327);  exp_1 = None
        mul_29: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_1, mul_28);  view_1 = mul_28 = None
        add_12: "f32[4, 16, 128]" = torch.ops.aten.add.Tensor(mul_25, mul_29);  mul_25 = mul_29 = None
        mul_30: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_21, add_12);  view_21 = add_12 = None
        view_22: "f32[64, 128]" = torch.ops.aten.view.default(mul_30, [64, 128]);  mul_30 = None
        permute: "f32[32, 128]" = torch.ops.aten.permute.default(primals_4, [1, 0]);  primals_4 = None
        permute_21: "f32[128, 32]" = torch.ops.aten.permute.default(permute, [1, 0]);  permute = None
        mm_8: "f32[64, 32]" = torch.ops.aten.mm.default(view_22, permute_21);  permute_21 = None
        permute_22: "f32[128, 64]" = torch.ops.aten.permute.default(view_22, [1, 0])
        mm_9: "f32[128, 32]" = torch.ops.aten.mm.default(permute_22, view);  permute_22 = view = None
        sum_10: "f32[1, 128]" = torch.ops.aten.sum.dim_IntList(view_22, [0], True);  view_22 = None
        view_23: "f32[128]" = torch.ops.aten.view.default(sum_10, [128]);  sum_10 = None
        view_24: "f32[4, 16, 32]" = torch.ops.aten.view.default(mm_8, [4, 16, 32]);  mm_8 = None

        # File: /work/wt/compile/scripts/compile_info_cpu.py:35 in forward, code: return x + self.mlp(self.ln(x))
        sub: "f32[4, 16, 32]" = torch.ops.aten.sub.Tensor(primals_3, getitem_1);  primals_3 = getitem_1 = None
        mul: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(sub, rsqrt);  sub = rsqrt = None
        mul_36: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(view_24, mul);  mul = None
        sum_13: "f32[32]" = torch.ops.aten.sum.dim_IntList(mul_36, [0, 1]);  mul_36 = None
        sum_14: "f32[32]" = torch.ops.aten.sum.dim_IntList(view_24, [0, 1]);  view_24 = None
        return (sum_13, sum_14, None, mm_9, view_23, mm_7, view_20, sum_7, sum_8, mm_5, view_17, mm_3, view_14, mm_1, view_11)
