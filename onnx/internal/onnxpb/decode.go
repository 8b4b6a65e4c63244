package onnxpb

import (
	"math"
	"slices"
)

// UnmarshalModel decodes a ModelProto. The result shares no memory with b.
// Malformed input is an error wrapping ErrMalformed; no input panics.
func UnmarshalModel(b []byte) (*Model, error) {
	d := newDecoder(b, "ModelProto")
	m := &Model{}
	for !d.done() {
		f, wt, err := d.next()
		if err != nil {
			return nil, err
		}
		switch f {
		case 1:
			m.IRVersion, err = d.int64(f, wt)
		case 2:
			m.ProducerName, err = d.string(f, wt)
		case 3:
			m.ProducerVersion, err = d.string(f, wt)
		case 4:
			m.Domain, err = d.string(f, wt)
		case 5:
			m.ModelVersion, err = d.int64(f, wt)
		case 6:
			m.DocString, err = d.string(f, wt)
		case 7:
			m.Graph, err = decodeGraph(d, f, wt)
		case 8:
			var o OperatorSetID
			o, err = decodeOpset(d, f, wt)
			m.OpsetImport = append(m.OpsetImport, o)
		case 14:
			var p StringStringEntry
			p, err = decodeEntry(d, f, wt)
			m.MetadataProps = append(m.MetadataProps, p)
		default:
			if f == 20 || f == 25 {
				m.Unsupported = addField(m.Unsupported, f)
			}
			err = d.skip(wt)
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

func addField(list []int, f int) []int {
	if slices.Contains(list, f) {
		return list
	}
	return append(list, f)
}

// message opens the nested message of field f (wire type wt).
func message(d *decoder, f, wt int, name string) (*decoder, error) {
	if err := d.expect(f, wt, wireBytes); err != nil {
		return nil, err
	}
	return d.sub(name)
}

func decodeOpset(d *decoder, f, wt int) (o OperatorSetID, err error) {
	s, err := message(d, f, wt, "OperatorSetIdProto")
	if err != nil {
		return o, err
	}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return o, err
		}
		switch f {
		case 1:
			o.Domain, err = s.string(f, wt)
		case 2:
			o.Version, err = s.int64(f, wt)
		default:
			err = s.skip(wt)
		}
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

func decodeEntry(d *decoder, f, wt int) (p StringStringEntry, err error) {
	s, err := message(d, f, wt, "StringStringEntryProto")
	if err != nil {
		return p, err
	}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return p, err
		}
		switch f {
		case 1:
			p.Key, err = s.string(f, wt)
		case 2:
			p.Value, err = s.string(f, wt)
		default:
			err = s.skip(wt)
		}
		if err != nil {
			return p, err
		}
	}
	return p, nil
}

func decodeGraph(d *decoder, f, wt int) (*Graph, error) {
	s, err := message(d, f, wt, "GraphProto")
	if err != nil {
		return nil, err
	}
	g := &Graph{}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return nil, err
		}
		switch f {
		case 1:
			var n *Node
			n, err = decodeNode(s, f, wt)
			g.Node = append(g.Node, n)
		case 2:
			g.Name, err = s.string(f, wt)
		case 5:
			var t *Tensor
			t, err = decodeTensor(s, f, wt)
			g.Initializer = append(g.Initializer, t)
		case 10:
			g.DocString, err = s.string(f, wt)
		case 11, 12, 13:
			var v *ValueInfo
			v, err = decodeValueInfo(s, f, wt)
			switch f {
			case 11:
				g.Input = append(g.Input, v)
			case 12:
				g.Output = append(g.Output, v)
			default:
				g.ValueInfo = append(g.ValueInfo, v)
			}
		default:
			if f == 14 || f == 15 {
				g.Unsupported = addField(g.Unsupported, f)
			}
			err = s.skip(wt)
		}
		if err != nil {
			return nil, err
		}
	}
	return g, nil
}

func decodeNode(d *decoder, f, wt int) (*Node, error) {
	s, err := message(d, f, wt, "NodeProto")
	if err != nil {
		return nil, err
	}
	n := &Node{}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return nil, err
		}
		var str string
		switch f {
		case 1:
			str, err = s.string(f, wt)
			n.Input = append(n.Input, str)
		case 2:
			str, err = s.string(f, wt)
			n.Output = append(n.Output, str)
		case 3:
			n.Name, err = s.string(f, wt)
		case 4:
			n.OpType, err = s.string(f, wt)
		case 5:
			var a *Attribute
			a, err = decodeAttribute(s, f, wt)
			n.Attribute = append(n.Attribute, a)
		case 6:
			n.DocString, err = s.string(f, wt)
		case 7:
			n.Domain, err = s.string(f, wt)
		default:
			err = s.skip(wt)
		}
		if err != nil {
			return nil, err
		}
	}
	return n, nil
}

func decodeAttribute(d *decoder, f, wt int) (*Attribute, error) {
	s, err := message(d, f, wt, "AttributeProto")
	if err != nil {
		return nil, err
	}
	a := &Attribute{}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return nil, err
		}
		switch f {
		case 1:
			a.Name, err = s.string(f, wt)
		case 2:
			a.F, err = s.float32(f, wt)
		case 3:
			a.I, err = s.int64(f, wt)
		case 4:
			a.S, err = s.bytesCopy(f, wt)
		case 5:
			a.T, err = decodeTensor(s, f, wt)
		case 6:
			a.G, err = decodeGraph(s, f, wt)
		case 7:
			var bits []uint32
			bits, err = s.fixed32s(nil, f, wt)
			for _, b := range bits {
				a.Floats = append(a.Floats, math.Float32frombits(b))
			}
		case 8:
			a.Ints, err = s.int64s(a.Ints, f, wt)
		case 9:
			var b []byte
			b, err = s.bytesCopy(f, wt)
			a.Strings = append(a.Strings, b)
		case 10:
			var t *Tensor
			t, err = decodeTensor(s, f, wt)
			a.Tensors = append(a.Tensors, t)
		case 11:
			var g *Graph
			g, err = decodeGraph(s, f, wt)
			a.Graphs = append(a.Graphs, g)
		case 13:
			a.DocString, err = s.string(f, wt)
		case 20:
			var t int32
			t, err = s.int32(f, wt)
			a.Type = AttributeType(t)
		case 21:
			a.RefAttrName, err = s.string(f, wt)
		default:
			if f == 14 || f == 15 || f == 22 || f == 23 {
				a.Unsupported = addField(a.Unsupported, f)
			}
			err = s.skip(wt)
		}
		if err != nil {
			return nil, err
		}
	}
	return a, nil
}

func decodeTensor(d *decoder, f, wt int) (*Tensor, error) {
	s, err := message(d, f, wt, "TensorProto")
	if err != nil {
		return nil, err
	}
	return tensorBody(s)
}

// tensorBody reads the fields of a TensorProto until s is done.
func tensorBody(s *decoder) (*Tensor, error) {
	t := &Tensor{}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return nil, err
		}
		switch f {
		case 1:
			t.Dims, err = s.int64s(t.Dims, f, wt)
		case 2:
			t.DataType, err = s.int32(f, wt)
		case 4:
			var bits []uint32
			bits, err = s.fixed32s(nil, f, wt)
			for _, b := range bits {
				t.FloatData = append(t.FloatData, math.Float32frombits(b))
			}
		case 5:
			var vs []int64
			vs, err = s.int64s(nil, f, wt)
			for _, v := range vs {
				t.Int32Data = append(t.Int32Data, int32(v))
			}
		case 6:
			var b []byte
			b, err = s.bytesCopy(f, wt)
			t.StringData = append(t.StringData, b)
		case 7:
			t.Int64Data, err = s.int64s(t.Int64Data, f, wt)
		case 8:
			t.Name, err = s.string(f, wt)
		case 9:
			t.RawData, err = s.bytesCopy(f, wt)
		case 10:
			var bits []uint64
			bits, err = s.fixed64s(nil, f, wt)
			for _, b := range bits {
				t.DoubleData = append(t.DoubleData, math.Float64frombits(b))
			}
		case 11:
			var vs []int64
			vs, err = s.int64s(nil, f, wt)
			for _, v := range vs {
				t.Uint64Data = append(t.Uint64Data, uint64(v))
			}
		case 12:
			t.DocString, err = s.string(f, wt)
		case 13:
			var p StringStringEntry
			p, err = decodeEntry(s, f, wt)
			t.ExternalData = append(t.ExternalData, p)
		case 14:
			t.DataLocation, err = s.int32(f, wt)
		default:
			if f == 3 {
				t.Unsupported = addField(t.Unsupported, f)
			}
			err = s.skip(wt)
		}
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

func decodeValueInfo(d *decoder, f, wt int) (*ValueInfo, error) {
	s, err := message(d, f, wt, "ValueInfoProto")
	if err != nil {
		return nil, err
	}
	v := &ValueInfo{}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return nil, err
		}
		switch f {
		case 1:
			v.Name, err = s.string(f, wt)
		case 2:
			v.Type, err = decodeType(s, f, wt)
		case 3:
			v.DocString, err = s.string(f, wt)
		default:
			err = s.skip(wt)
		}
		if err != nil {
			return nil, err
		}
	}
	return v, nil
}

func decodeType(d *decoder, f, wt int) (*Type, error) {
	s, err := message(d, f, wt, "TypeProto")
	if err != nil {
		return nil, err
	}
	t := &Type{}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return nil, err
		}
		switch f {
		case 1:
			t.Tensor, err = decodeTensorType(s, f, wt)
		case 6:
			t.Denotation, err = s.string(f, wt)
		default:
			if f == 4 || f == 5 || f == 8 || f == 9 {
				t.Unsupported = addField(t.Unsupported, f)
			}
			err = s.skip(wt)
		}
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

func decodeTensorType(d *decoder, f, wt int) (*TensorType, error) {
	s, err := message(d, f, wt, "TypeProto.Tensor")
	if err != nil {
		return nil, err
	}
	t := &TensorType{}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return nil, err
		}
		switch f {
		case 1:
			t.ElemType, err = s.int32(f, wt)
		case 2:
			t.Shape, err = decodeShape(s, f, wt)
		default:
			err = s.skip(wt)
		}
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

func decodeShape(d *decoder, f, wt int) (*TensorShape, error) {
	s, err := message(d, f, wt, "TensorShapeProto")
	if err != nil {
		return nil, err
	}
	sh := &TensorShape{}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return nil, err
		}
		switch f {
		case 1:
			var dim Dimension
			dim, err = decodeDim(s, f, wt)
			sh.Dim = append(sh.Dim, dim)
		default:
			err = s.skip(wt)
		}
		if err != nil {
			return nil, err
		}
	}
	return sh, nil
}

func decodeDim(d *decoder, f, wt int) (dim Dimension, err error) {
	s, err := message(d, f, wt, "TensorShapeProto.Dimension")
	if err != nil {
		return dim, err
	}
	for !s.done() {
		f, wt, err := s.next()
		if err != nil {
			return dim, err
		}
		// dim_value and dim_param are a oneof: the last one read wins.
		switch f {
		case 1:
			dim.Value, err = s.int64(f, wt)
			dim.HasValue, dim.Param = true, ""
		case 2:
			dim.Param, err = s.string(f, wt)
			dim.HasValue, dim.Value = false, 0
		case 3:
			dim.Denotation, err = s.string(f, wt)
		default:
			err = s.skip(wt)
		}
		if err != nil {
			return dim, err
		}
	}
	return dim, nil
}
